// Placement on nodes whose GPUs are shared: time-sliced replicas on distinct GPUs unless the pod
// packs them, MIG devices best fit, fragmentation of whole GPUs only.
#include <doctest/doctest.h>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/shared_nodes.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement {
namespace {

using cluster::testing::MakePod;
using cluster::testing::Request;

class SharedFixture {
 public:
  SharedFixture() : pipeline(&model) {
    model.ApplyNode(cluster::testing::TimeSlicedA100Node("ts"));
    model.ApplyNode(cluster::testing::MigA100Node("mig"));
  }
  const cluster::NodeState& Node(const std::string& name) {
    auto reader = model.Read();
    const cluster::NodeState* n = reader.Find(name);
    REQUIRE(n);
    return *n;
  }
  FilterOutcome Filter(const cluster::PodRequest& pod, const std::string& node) {
    std::vector<std::string> names{node};
    return pipeline.Filter(pod, names);
  }
  cluster::ClusterModel model;
  Pipeline pipeline;
};

TEST_CASE("shared placement: a pod of N replicas gets N distinct GPUs by default") {
  SharedFixture f;
  const cluster::SharedDevices& s = f.Node("ts").spec().shared;
  for (int k : {2, 4, 8}) {
    auto got = f.pipeline.ReserveBest(Request("p" + std::to_string(k), k), "ts");
    REQUIRE(got.ok());
    CHECK(got->size() == k);
    CHECK(s.GpusOf(*got).size() == k);
  }
  // 14 replicas are taken, on every GPU: 8 distinct GPUs still have a free replica, 9 are too many.
  CHECK(f.Filter(Request("nine", 9), "ts").unresolvable.size() == 1);
  CHECK(f.Filter(Request("eight", 8), "ts").passed.size() == 1);
}

TEST_CASE("shared placement: replicas of one GPU only when the pod packs them") {
  SharedFixture f;
  // Every GPU's replicas taken but GPU 0's replicas 2 and 3.
  f.model.ApplyPod(MakePod("busy", 30, "ts", "0,1,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31"));
  FilterOutcome distinct = f.Filter(Request("d", 2), "ts");
  REQUIRE(distinct.failed.size() == 1);
  CHECK(distinct.failed[0].reason == "2 GPUs requested on distinct GPUs, 1 GPU with a free replica (0)");
  auto packed = f.pipeline.ReserveBest(Request("p", 2, {{k8s::kReplicaPlacementAnnotation, "packed"}}), "ts");
  REQUIRE(packed.ok());
  CHECK(*packed == GpuSet::Of({2, 3}));
  CHECK(Request("bad", 2, {{k8s::kReplicaPlacementAnnotation, "spread"}}).error ==
        "invalid topofit.io/replica-placement 'spread': expected distinct or packed");
}

TEST_CASE("shared placement: MIG devices are taken from the fullest GPU so that whole GPUs stay free") {
  SharedFixture f;
  const cluster::NodeState& node = f.Node("mig");
  f.model.ApplyPod(MakePod("a", 2, "mig", "7,8"));  // GPU 1 has 5 free devices, the others 7.
  auto one = f.pipeline.ReserveBest(Request("one", 1), "mig");
  REQUIRE(one.ok());
  CHECK(node.spec().shared.GpusOf(*one) == GpuSet::Of({1}));
  auto six = f.pipeline.ReserveBest(Request("six", 6), "mig");
  REQUIRE(six.ok());
  // GPU 1's last 4 devices, then 2 of another GPU: 6 whole GPUs stay free.
  CHECK(node.spec().shared.WholeFree(node.usable(), node.free()).size() == 6);
}

}  // namespace
}  // namespace topofit::placement
