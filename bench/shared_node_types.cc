#include "bench/shared_node_types.h"

#include <charconv>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "extender/cluster/shared_devices.h"
#include "extender/cluster/topology_resolver.h"
#include "extender/k8s/objects.h"

namespace topofit::bench {
namespace {

std::optional<int> Replicas(std::string_view digits) {
  int r = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), r);
  if (ec != std::errc() || end != digits.data() + digits.size() || r < 2) return std::nullopt;
  return r;
}

}  // namespace

Status ApplySharingShape(const std::string& shape, NodeSpec& node) {
  const int gpus = node.gpus;
  std::map<std::string, std::string> labels;
  labels[k8s::kGfdCountLabel] = std::to_string(gpus);
  if (shape.starts_with("mig-")) {
    labels[k8s::kGfdProductLabel] = node.model + "-MIG-" + shape.substr(4);
    labels[k8s::kGfdMigStrategyLabel] = "single";
    labels[k8s::kGfdReplicasLabel] = "1";
  } else {
    const bool mps = shape.starts_with("mps");
    auto r = Replicas(std::string_view(shape).substr(mps ? 3 : 2));
    if ((!mps && !shape.starts_with("ts")) || !r) {
      return Error{"sharing shape '" + shape + "': expected ts<R>, mps<R> (R >= 2) or mig-<g>g.<mem>gb"};
    }
    labels[k8s::kGfdProductLabel] = node.model + "-SHARED";
    labels[k8s::kGfdSharingStrategyLabel] = mps ? "mps" : "time-slicing";
    labels[k8s::kGfdReplicasLabel] = std::to_string(*r);
  }
  // How many devices the plugin advertises: the extender's own reading of the labels.
  std::vector<std::string> warnings;
  auto s = cluster::ReadSharing(labels, 1, warnings);
  if (!s) return Error{"sharing shape '" + shape + "': the labels describe no sharing"};
  if (s->mig()) labels[k8s::kGfdCountLabel] = std::to_string(gpus * s->per_gpu);
  node.labels = std::move(labels);
  node.gpus = gpus * s->per_gpu;
  return Status::Ok();
}

Status ShareModels(const std::string& spec, const GpuModelMap& map, std::vector<NodeSpec>& nodes) {
  std::stringstream ss(spec);
  std::string entry;
  while (std::getline(ss, entry, ',')) {
    if (entry.empty()) continue;
    const size_t at = entry.find('@');
    if (at == std::string::npos) return Error{"--share entry '" + entry + "': expected MODEL@SHAPE"};
    const std::string model = entry.substr(0, at), shape = entry.substr(at + 1);
    int shared = 0;
    for (NodeSpec& n : nodes) {
      if (n.model != model || n.gpus <= 0) continue;
      if (n.profile.empty()) {
        auto topology = map.TopologyFor(n.model, n.gpus);
        if (!topology) return Error{"node " + n.name + ": " + topology.error()};
        n.profile = *topology;
      }
      if (Status st = ApplySharingShape(shape, n); !st.ok()) return st;
      ++shared;
    }
    if (shared == 0) return Error{"--share entry '" + entry + "': no node of model " + model + " has GPUs"};
  }
  return Status::Ok();
}

Result<NodeType> ResolveSharedNodeType(const NodeSpec& node, const std::string& annotation,
                                       TopologyRegistry& registry) {
  k8s::NodeObject obj;
  obj.meta.name = node.name;
  obj.meta.labels = node.labels;
  obj.meta.annotations[k8s::kTopologyAnnotation] = annotation;
  obj.allocatable_gpus = obj.capacity_gpus = node.gpus;
  cluster::TopologyResolver resolver(&registry);
  cluster::ResolvedTopology r = resolver.Resolve(obj);
  std::string what = fmt::format("node {} ({} devices)", node.name, node.gpus);
  if (!r.warnings.empty()) return Error{what + ": " + r.warnings.front()};
  if (!r.shared.shared()) return Error{what + ": its labels describe no shared GPUs"};
  if (!r.topology || r.topology->gpu_count() != node.gpus || r.usable.size() != node.gpus) {
    return Error{what + ": the labels do not describe every device"};
  }
  return NodeTypeOf(r, node.model, annotation);
}

NodeType NodeTypeOf(const cluster::ResolvedTopology& r, std::string model, std::string annotation) {
  NodeType t;
  t.model = std::move(model);
  t.gpus = int(r.usable.size());
  t.annotation = std::move(annotation);
  t.topology = r.topology;
  t.physical = r.physical;
  t.shared = r.shared;
  return t;
}

}  // namespace topofit::bench
