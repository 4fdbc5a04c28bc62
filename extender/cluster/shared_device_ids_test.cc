// Device ids on shared nodes read back: the plan topofit writes, the gpu-actual and gpu-health the node
// side writes name replicas as the NVIDIA device plugin does ("<uuid>::<replica>"); the model maps them
// to its devices (docs/shared-gpus.md).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/shared_nodes.h"
#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/topofit_annotations.h"

namespace topofit::cluster {
namespace {

using testing::MakePod;
using testing::MigA100Node;
using testing::TimeSlicedA100Node;

constexpr const char* kUuids = "GPU-a,GPU-b,GPU-c,GPU-d,GPU-e,GPU-f,GPU-g,GPU-h";

k8s::NodeObject TimeSliced(std::vector<std::string> unhealthy = {}, int allocatable = 32) {
  k8s::NodeObject n = TimeSlicedA100Node("ts", allocatable);
  n.meta.annotations[k8s::kGpuUuidsAnnotation] = kUuids;
  k8s::GpuHealthReport r;
  r.unhealthy = std::move(unhealthy);
  n.meta.annotations[k8s::kGpuHealthAnnotation] = k8s::EncodeGpuHealth(r);
  return n;
}

// The MIG node of the labels (8 A100s of 7 1g.10gb devices) with its UUIDs and a MIG map listing
// `per_gpu` devices "MIG-<gpu>-<device>" on each GPU.
k8s::NodeObject Mig(int per_gpu) {
  k8s::NodeObject n = MigA100Node("mig");
  n.meta.annotations[k8s::kGpuUuidsAnnotation] = kUuids;
  std::string map;
  for (int g = 0; g < 8; ++g) {
    if (g) map += ';';
    for (int d = 0; d < per_gpu; ++d) map += (d ? "," : "") + fmt::format("MIG-{}-{}", g, d);
  }
  n.meta.annotations[k8s::kGpuMigUuidsAnnotation] = map;
  return n;
}

std::string Ids(std::vector<std::string> ids) {
  k8s::GpuAssignment a;
  a.node = "ts";
  a.unix_seconds = 1700000000;
  a.containers.emplace_back("c", std::move(ids));
  return k8s::EncodeGpuAssignment(a);
}

TEST_CASE("shared ids: replica ids map to devices and back - bare UUIDs, bad replicas and MIG ids do not") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(TimeSliced());
  REQUIRE(r.shared.per_gpu == 4);
  const std::vector<std::string> ids = r.DeviceIds();
  for (int d = 0; d < 32; ++d) CHECK(r.DeviceIndexOf(ids[d]) == d);
  CHECK(r.DeviceIndexOf("GPU-b") == -1);      // A physical GPU is no device here.
  CHECK(r.DeviceIndexOf("GPU-b::4") == -1);   // Replicas 0..3.
  CHECK(r.DeviceIndexOf("GPU-b::") == -1);
  CHECK(r.DeviceIndexOf("GPU-b::1x") == -1);
  CHECK(r.DeviceIndexOf("GPU-b::-1") == -1);
  CHECK(r.DeviceIndexOf("GPU-z::0") == -1);
  CHECK(r.PhysicalIndexOf("GPU-b::3") == 1);
  CHECK(r.PhysicalIndexOf("GPU-b") == 1);
  ResolvedTopology m = resolver.Resolve(Mig(7));
  CHECK(m.DeviceIndexOf("GPU-a") == -1);
  CHECK(m.DeviceIndexOf("GPU-a::0") == -1);
}

TEST_CASE("shared ids: a MIG node's published MIG map names its devices, one that disagrees is warned about") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology m = resolver.Resolve(Mig(7));
  CHECK(m.warnings.empty());
  const std::vector<std::string> ids = m.DeviceIds();
  REQUIRE(ids.size() == 56);
  CHECK(ids[9] == "MIG-1-2");  // GPU 1's third MIG device.
  for (int d = 0; d < 56; d += 5) CHECK(m.DeviceIndexOf(ids[d]) == d);
  CHECK(m.PhysicalIndexOf("MIG-1-2") == 1);
  CHECK(m.DeviceIndexOf("MIG-9-0") == -1);
  ResolvedTopology six = resolver.Resolve(Mig(6));  // 6 a GPU listed, 7 per the labels: no map.
  CHECK(six.DeviceIds().empty());
  REQUIRE(six.warnings.size() == 1);
  CHECK(six.warnings[0].find("topofit.io/gpu-mig-uuids lists 48 MIG devices on 8 GPUs") == 0);
  // A plan naming MIG devices is read back onto them.
  ClusterModel model;
  model.ApplyNode(Mig(7));
  k8s::GpuAssignment a;
  a.node = "mig";
  a.containers.emplace_back("c", std::vector<std::string>{"MIG-3-0", "MIG-3-1"});
  model.ApplyPod(MakePod("p", 2, "mig", "21,22", 0, {{k8s::kGpuPlanAnnotation, k8s::EncodeGpuAssignment(a)}}));
  auto info = model.Node("mig");
  REQUIRE(info);
  CHECK(info->warnings.empty());
  CHECK(info->gpus[21].state == GpuState::kPlanned);
  CHECK(info->gpus[22].state == GpuState::kPlanned);
  CHECK(info->pods[0].conflict.empty());
}

TEST_CASE("shared ids: a plan and an actual naming replicas hold those devices, no conflict, no warning") {
  ClusterModel model;
  model.ApplyNode(TimeSliced());
  // Devices 6 (GPU b, replica 2) and 8 (GPU c, replica 0), as the bind wrote them.
  model.ApplyPod(MakePod("p", 2, "ts", "6,8", 0, {{k8s::kGpuPlanAnnotation, Ids({"GPU-b::2", "GPU-c::0"})}}));
  auto info = model.Node("ts");
  REQUIRE(info);
  CHECK(info->warnings.empty());
  REQUIRE(info->pods.size() == 1);
  CHECK(info->pods[0].conflict.empty());
  CHECK(info->gpus[6].state == GpuState::kPlanned);
  CHECK(info->gpus[8].state == GpuState::kPlanned);
  CHECK(info->free == GpuSet::FirstN(32) - GpuSet::Of({6, 8}));
  // Kubelet gave other replicas (GPU a's 1, GPU d's 3): the actual wins.
  k8s::PodObject seen = MakePod("p", 2, "ts", "6,8", 0,
                                {{k8s::kGpuPlanAnnotation, Ids({"GPU-b::2", "GPU-c::0"})},
                                 {k8s::kGpuActualAnnotation, Ids({"GPU-a::1", "GPU-d::3"})}});
  model.ApplyPod(seen);
  info = model.Node("ts");
  CHECK(info->warnings.empty());
  CHECK(info->gpus[1].state == GpuState::kInUse);
  CHECK(info->gpus[15].state == GpuState::kInUse);
  CHECK(info->free == GpuSet::FirstN(32) - GpuSet::Of({1, 15}));
}

TEST_CASE("shared ids: the node side's health in replica ids marks the physical GPU's devices unhealthy") {
  ClusterModel model;
  // Kubelet's allocatable leaves the unhealthy devices out: 28 (the labels' 32 are warned about).
  model.ApplyNode(TimeSliced({"GPU-c::0", "GPU-c::1", "GPU-c::2", "GPU-c::3"}, 28));
  auto info = model.Node("ts");
  REQUIRE(info);
  for (const std::string& w : info->warnings) CHECK(w.find("not one of the node's GPUs") == std::string::npos);
  CHECK(info->observed);
  const GpuSet gpu_c = GpuSet::Of({8, 9, 10, 11});
  CHECK(info->usable == GpuSet::FirstN(32) - gpu_c);
  for (int d : gpu_c.Indices()) CHECK(info->gpus[d].state == GpuState::kUnhealthy);
}

}  // namespace
}  // namespace topofit::cluster
