#include "extender/cluster/shared_devices.h"

#include <doctest/doctest.h>

#include "extender/cluster/node_state.h"
#include "extender/cluster/testing/shared_nodes.h"
#include "extender/cluster/topology_resolver.h"

namespace topofit::cluster {
namespace {

using testing::MigA100Node;
using testing::TimeSlicedA100Node;

TEST_CASE("shared: a time-sliced node keeps its physical topology, replicas are devices of it") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(TimeSlicedA100Node("ts"));
  REQUIRE(r.topology);
  CHECK(r.source == TopologySource::kGfdLabels);
  CHECK(r.profile == "hgx-a100-8");
  CHECK(r.warnings.empty());
  CHECK(r.shared.mode == SharingMode::kTimeSlicing);
  CHECK(r.shared.gpus == 8);
  CHECK(r.shared.per_gpu == 4);
  REQUIRE(r.physical);
  CHECK(r.physical->gpu_count() == 8);
  CHECK(r.topology->gpu_count() == 32);
  CHECK(r.usable == GpuSet::FirstN(32));
  CHECK(r.allocatable == 32);
  // Devices 0..3 are GPU 0's replicas; 4 is GPU 1's first: linked as GPUs 0 and 1 are (NV12).
  CHECK(r.shared.GpuOf(5) == 1);
  CHECK(r.shared.SlotOf(5) == 1);
  CHECK(r.topology->link(0, 4) == r.physical->link(0, 1));
  CHECK(r.topology->link(0, 4).cls == LinkClass::Nv);
  CHECK(r.topology->link(0, 1) == r.physical->link(0, 1));  // Two replicas of GPU 0: its best link.
}

TEST_CASE("shared: a MIG single-strategy node is 8 GPUs of 7 devices with no NVLink between devices") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MigA100Node("mig"));
  REQUIRE(r.topology);
  CHECK(r.profile == "hgx-a100-8");
  CHECK(r.warnings.empty());
  CHECK(r.shared.mig());
  CHECK(r.shared.mig_profile == "1g.10gb");
  CHECK(r.shared.mig_compute_slices == 1);
  CHECK(r.shared.mig_memory_gb == 10);
  CHECK(r.shared.gpus == 8);
  CHECK(r.shared.per_gpu == 7);
  CHECK(r.topology->gpu_count() == 56);
  for (int a = 0; a < 56; a += 5)
    for (int b = 0; b < 56; b += 3)
      if (a != b) CHECK(r.topology->link(a, b).cls != LinkClass::Nv);
  CHECK(r.shared.DeviceName(9) == "MIG 1g.10gb #2");
}

TEST_CASE("shared: labels that disagree with allocatable are warned about, never a generic profile") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  auto node = TimeSlicedA100Node("ts", 28);  // One GPU's replicas hidden (unhealthy).
  ResolvedTopology r = resolver.Resolve(node);
  REQUIRE(r.topology);
  CHECK(r.profile == "hgx-a100-8");
  CHECK(r.usable == GpuSet::FirstN(28));
  CHECK(r.warnings.size() == 1);
  // 3g.40gb: two devices per A100; 2 devices on an A30's 4 slices of 2g.12gb.
  std::vector<std::string> warnings;
  auto mig3 = ReadSharing({{k8s::kGfdProductLabel, "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb"}, {k8s::kGfdMigStrategyLabel, "single"}},
                          16, warnings);
  REQUIRE(mig3);
  CHECK(mig3->per_gpu == 2);
  CHECK(mig3->gpus == 8);
  auto a30 = ReadSharing({{k8s::kGfdProductLabel, "NVIDIA-A30-MIG-2g.12gb"}, {k8s::kGfdMigStrategyLabel, "single"}}, 4,
                         warnings);
  REQUIRE(a30);
  CHECK(a30->per_gpu == 2);
  CHECK(a30->gpus == 2);
  CHECK(warnings.empty());
  CHECK_FALSE(ReadSharing({{k8s::kGfdSharingStrategyLabel, "none"}, {k8s::kGfdReplicasLabel, "1"}}, 8, warnings));
  CHECK_FALSE(ReadSharing({{k8s::kGfdMigStrategyLabel, "single"}, {k8s::kGfdProductLabel, "NVIDIA-A100-SXM4-80GB"}}, 8,
                          warnings));
  CHECK(StripSharingSuffix("Tesla-T4-SHARED") == "Tesla-T4");
}

TEST_CASE("shared: offerable devices - distinct GPUs by default, packed when allowed, MIG best fit") {
  SharedDevices ts;
  ts.mode = SharingMode::kTimeSlicing;
  ts.gpus = 4;
  ts.per_gpu = 4;
  // GPU 0 has replicas 1 and 3 free, GPU 1 none, GPU 2 all, GPU 3 replica 2.
  GpuSet free = GpuSet::Of({1, 3, 8, 9, 10, 11, 14});
  CHECK(ts.Offerable(free, 2, false) == GpuSet::Of({1, 8, 14}));
  CHECK(ts.Offerable(free, 2, true) == free);
  CHECK(ts.Offerable(free, 8, false) == free);  // Not enough: as it is, the placer finds none.
  CHECK(ts.WholeFree(GpuSet::FirstN(16), free) == GpuSet::Of({2}));
  SharedDevices mig;
  mig.mode = SharingMode::kMigSingle;
  mig.gpus = 3;
  mig.per_gpu = 7;
  GpuSet mfree = GpuSet::FirstN(21) - GpuSet::Of({0, 1, 2, 3, 4, 8});  // GPU 0: 2 free, GPU 1: 6, GPU 2: 7.
  CHECK(mig.Offerable(mfree, 1, false) == GpuSet::Of({5}));
  CHECK(mig.Offerable(mfree, 4, false) == GpuSet::Of({5, 6, 7, 9}));  // GPU 2 stays whole.
  CHECK(mig.Offerable(mfree, 4, true) == GpuSet::Of({5, 6, 7, 9}));   // Packing is MIG's default anyway.
}

TEST_CASE("shared: device ids - replica ids from published UUIDs, none for MIG, GPU states name the GPU") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  auto node = TimeSlicedA100Node("ts");
  node.meta.annotations[k8s::kGpuUuidsAnnotation] = "GPU-a,GPU-b,GPU-c,GPU-d,GPU-e,GPU-f,GPU-g,GPU-h";
  ResolvedTopology r = resolver.Resolve(node);
  REQUIRE(r.uuids.size() == 8);
  auto ids = r.DeviceIds();
  REQUIRE(ids.size() == 32);
  CHECK(ids[0] == "GPU-a::0");
  CHECK(ids[6] == "GPU-b::2");
  CHECK(resolver.Resolve(MigA100Node("mig")).DeviceIds().empty());
  NodeState state("ts", r);
  auto gpus = state.GpuStates();
  REQUIRE(gpus.size() == 32);
  CHECK(gpus[6].gpu == 1);
  CHECK(gpus[6].uuid == "GPU-b");
  CHECK(gpus[6].device == "replica 2");
  CHECK(gpus[6].state == GpuState::kFree);
}

}  // namespace
}  // namespace topofit::cluster
