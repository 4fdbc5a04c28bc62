#include "bench/dra_nodes.h"

#include <fmt/format.h>

#include <vector>

namespace topofit::bench {
namespace {

constexpr const char* kDriver = "gpu.nvidia.com";
constexpr const char* kRequest = "container-0-request-0";

}  // namespace

Result<DraNodes> ParseDraNodes(std::string_view name) {
  if (name == "none") return DraNodes::kNone;
  if (name == "all") return DraNodes::kAll;
  if (name == "half") return DraNodes::kHalf;
  return Error{fmt::format("--dra-nodes: '{}' is not one of none, all, half", name)};
}

std::string_view DraNodesName(DraNodes mode) {
  switch (mode) {
    case DraNodes::kAll: return "all";
    case DraNodes::kHalf: return "half";
    case DraNodes::kNone: break;
  }
  return "none";
}

void MarkDraNodes(SimCluster& cluster, DraNodes mode) {
  std::vector<int> seen(cluster.types().size(), 0);  // Nodes of each type met so far.
  for (int i = 0; i < int(cluster.nodes().size()); ++i) {
    const SimNode& n = cluster.node(i);
    bool dra = false;
    if (n.type >= 0 && n.all.size() > 0) {
      dra = mode == DraNodes::kAll || (mode == DraNodes::kHalf && seen[n.type] % 2 == 0);
      ++seen[n.type];
    }
    cluster.set_dra(i, dra);
  }
}

GpuSet DraFirstFit(const SimNode& node, int k) {
  GpuSet out;
  for (int i : node.free.Indices()) {  // Ascending: the slice's device order.
    if (out.size() == k) break;
    out.Add(i);
  }
  return out.size() == k ? out : GpuSet();
}

k8s::DeviceClassObject GpuDeviceClass() {
  k8s::DeviceClassObject c;
  c.meta.name = kDriver;
  c.creation_timestamp = "2026-01-01T00:00:00Z";
  c.extended_resource_name = "nvidia.com/gpu";
  c.cel_selectors = {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"};
  return c;
}

k8s::ResourceSliceObject NodeGpuSlice(const SimNode& node) {
  k8s::ResourceSliceObject s;
  const std::string& name = node.spec->name;
  s.meta.name = name + "-gpus";
  s.driver = kDriver;
  s.pool = name;
  s.generation = 1;
  s.slice_count = 1;
  s.node_name = name;
  for (int i : node.all.Indices()) {
    k8s::DraDevice d;
    d.name = fmt::format("gpu-{}", i);
    const std::string domain = std::string(kDriver) + "/";
    d.attributes[domain + "type"] = "gpu";
    d.attributes[domain + "uuid"] = fmt::format("GPU-{}-{}", name, i);
    d.attributes[domain + "pcieBusID"] = fmt::format("0000:{:02x}:00.0", 0x10 + i);
    d.attributes[domain + "productName"] = node.spec->model;
    s.devices.push_back(std::move(d));
  }
  return s;
}

std::string PodGpuClaimUid(const std::string& pod_uid) { return "claim-" + pod_uid; }

k8s::ResourceClaimObject PodGpuClaim(const std::string& pod_uid, const std::string& node, GpuSet gpus) {
  k8s::ResourceClaimObject c;
  c.meta.uid = PodGpuClaimUid(pod_uid);
  c.meta.name = pod_uid + "-extended-resources-0";
  c.meta.namespace_ = "bench";
  k8s::DeviceRequest r;
  r.name = kRequest;
  r.device_class = kDriver;
  r.count = gpus.size();
  c.requests.push_back(std::move(r));
  c.extended_resource = true;
  c.owner_pod = {pod_uid, pod_uid};
  c.reserved_for.push_back(c.owner_pod);
  c.allocated = true;
  for (int i : gpus.Indices()) c.results.push_back({kRequest, kDriver, node, fmt::format("gpu-{}", i)});
  return c;
}

}  // namespace topofit::bench
