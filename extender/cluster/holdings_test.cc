// Pods as writers of the model: annotated holdings, unknown identity, conflicts, lifecycle.
#include <doctest/doctest.h>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"

namespace topofit::cluster {
namespace {

using testing::MakeNode;
using testing::MakePod;

bool Contains(const std::vector<std::string>& lines, std::string_view needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TEST_CASE("holdings: a bound pod's annotation names its GPUs") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 8, "dgx1-v100"));
  model.ApplyPod(MakePod("a", 2, "n", "3, 5"));
  auto info = model.Node("n");
  CHECK(info->free == GpuSet::FirstN(8) - GpuSet::Of({3, 5}));
  REQUIRE(info->pods.size() == 1);
  CHECK(info->pods[0].pod == "default/pod-a");
  CHECK(info->pods[0].gpus == GpuSet::Of({3, 5}));
  CHECK_FALSE(info->pods[0].unknown_identity);
  CHECK(info->warnings.empty());
  auto by_name = model.PodByName("default", "pod-a");
  REQUIRE(by_name);
  CHECK(by_name->uid == "a");
}

TEST_CASE("holdings: without the annotation a pod holds the best set of its size - and the node says so") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 8, "dgx1-v100"));
  model.ApplyPod(MakePod("a", 4, "n"));
  auto info = model.Node("n");
  REQUIRE(info->pods.size() == 1);
  const PodGpuInfo& p = info->pods[0];
  CHECK(p.unknown_identity);
  CHECK(p.gpus.size() == 4);
  // Pessimistic: a fully NVLink-meshed quad, the most valuable set of 4.
  CHECK((p.gpus == GpuSet::Of({0, 1, 2, 3}) || p.gpus == GpuSet::Of({4, 5, 6, 7})));
  CHECK(info->free.size() == 4);
  CHECK(Contains(info->warnings, "pod default/pod-a holds 4 GPUs of unknown identity (no topofit.io/gpu-ids)"));
  CHECK(model.Totals().unknown_identity_gpus == 4);
}

TEST_CASE("holdings: two pods claiming the same GPU - the first keeps it - the second is counted pessimistically") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 8, "dgx1-v100"));
  model.ApplyPod(MakePod("a", 2, "n", "2,3"));
  model.ApplyPod(MakePod("b", 2, "n", "3,4"));
  auto info = model.Node("n");
  REQUIRE(info->pods.size() == 2);
  CHECK(info->pods[0].gpus == GpuSet::Of({2, 3}));
  const PodGpuInfo& b = info->pods[1];
  CHECK(b.unknown_identity);
  CHECK(b.conflict == "names GPU 3 already held by default/pod-a");
  CHECK(b.gpus.size() == 2);
  CHECK_FALSE(b.gpus.Intersects(GpuSet::Of({2, 3})));  // Never a double grant.
  CHECK(b.gpus.contains(4));  // The part of its claim nobody holds stays its own.
  CHECK(info->free.size() == 4);
  CHECK(Contains(info->warnings, "pod default/pod-b names GPU 3 already held by default/pod-a; counted as 2 GPUs of unknown identity"));
  // When the first pod goes, the second's claim is honoured.
  model.DeletePod("a");
  auto after = model.Node("n");
  REQUIRE(after->pods.size() == 1);
  CHECK(after->pods[0].gpus == GpuSet::Of({3, 4}));
  CHECK(after->warnings.empty());
}

TEST_CASE("holdings: invalid annotations are conflicts - not crashes") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  model.ApplyPod(MakePod("a", 1, "n", "7"));
  model.ApplyPod(MakePod("b", 1, "n", "zero"));
  model.ApplyPod(MakePod("c", 1, "n", "0,1"));
  auto info = model.Node("n");
  REQUIRE(info->pods.size() == 3);
  CHECK(info->pods[0].conflict == "names GPU 7 but the node's usable GPUs are 0,1,2,3");
  CHECK(info->pods[1].conflict == "topofit.io/gpu-ids 'zero' is not a GPU list like 0,1,2,3");
  CHECK(info->pods[2].conflict == "names 2 GPUs (0,1) but requests 1");
  CHECK(info->free.size() == 1);
  for (const auto& p : info->pods) CHECK(p.unknown_identity);
}

TEST_CASE("holdings: over-commitment is reported and free never goes negative") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 2, "phb-2-workstation"));
  model.ApplyPod(MakePod("a", 2, "n", "0,1"));
  model.ApplyPod(MakePod("b", 1, "n"));
  auto info = model.Node("n");
  CHECK(info->free.empty());
  CHECK(Contains(info->warnings, "over-committed: pods hold 1 more GPUs than the node's 2 usable"));
}

TEST_CASE("holdings: terminated and GPU-less pods hold nothing - a deleting pod holds until it is gone") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  auto pod = MakePod("a", 2, "n", "0,1");
  model.ApplyPod(pod);
  CHECK(model.Node("n")->free.size() == 2);
  pod.phase = "Succeeded";
  model.ApplyPod(pod);
  CHECK(model.Node("n")->free.size() == 4);
  CHECK_FALSE(model.PodByUid("a"));

  auto b = MakePod("b", 2, "n", "2,3");
  model.ApplyPod(b);
  b.meta.deleting = true;
  model.ApplyPod(b);
  CHECK(model.Node("n")->free.size() == 2);  // kubelet frees devices only when the pod is terminal or gone.
  model.DeletePod("b");
  CHECK(model.Node("n")->free.size() == 4);

  model.ApplyPod(MakePod("c", 0, "n"));
  CHECK(model.Node("n")->pods.empty());
}

TEST_CASE("holdings: pods bound to a node the model does not know yet wait for it") {
  ClusterModel model;
  model.ApplyPod(MakePod("a", 2, "late", "0,1"));
  auto parked = model.PodByUid("a");
  REQUIRE(parked);
  CHECK(parked->node == "late");
  model.ApplyNode(MakeNode("late", 4, "pcie-4-single-socket"));
  CHECK(model.Node("late")->free == GpuSet::Of({2, 3}));
  // Node deleted and re-registered: the pod's GPUs are still held.
  model.DeleteNode("late");
  CHECK_FALSE(model.Node("late"));
  model.ApplyNode(MakeNode("late", 4, "pcie-4-single-socket"));
  CHECK(model.Node("late")->free == GpuSet::Of({2, 3}));
}

TEST_CASE("holdings: applying the same objects again changes nothing - unbound pods go to the pending cache") {
  ClusterModel model;
  auto node = MakeNode("n", 8, "dgx1-v100");
  model.ApplyNode(node);
  model.ApplyPod(MakePod("a", 2, "n", "0,1"));
  const NodeState* before = nullptr;
  uint64_t version = 0;
  {
    auto r = model.Read();
    before = r.Find("n");
    version = before->version();
  }
  model.ApplyNode(node);
  model.ApplyPod(MakePod("a", 2, "n", "0,1"));
  {
    auto r = model.Read();
    CHECK(r.Find("n") == before);  // Not re-resolved.
    CHECK(r.Find("n")->version() == version);
  }
  model.ApplyPod(MakePod("p", 1));
  auto pending = model.pending().Get("p");
  REQUIRE(pending);
  CHECK(pending->gpus == 1);
  model.ApplyPod(MakePod("p", 1, "n", "5"));
  CHECK_FALSE(model.pending().Get("p"));
}

TEST_CASE("holdings: a node whose topology changes keeps its pods") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 4));  // generic
  model.ApplyPod(MakePod("a", 1, "n", "2"));
  CHECK(model.Node("n")->source == TopologySource::kGenericFallback);
  model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  auto info = model.Node("n");
  CHECK(info->source == TopologySource::kAnnotationProfile);
  CHECK(info->free == GpuSet::Of({0, 1, 3}));
}

TEST_CASE("holdings: totals across the cluster") {
  ClusterModel model;
  model.ApplyNode(MakeNode("a", 8, "hgx-a100-8"));
  model.ApplyNode(MakeNode("b", 4, "pcie-4-single-socket"));
  model.ApplyNode(MakeNode("cpu", 0));
  model.ApplyPod(MakePod("x", 2, "a", "0,1"));
  ClusterTotals t = model.Totals();
  CHECK(t.nodes == 3);
  CHECK(t.gpu_nodes == 2);
  CHECK(t.usable_gpus == 12);
  CHECK(t.free_gpus == 10);
  CHECK(t.held_gpus == 2);
  CHECK(t.free_shapes.of_size(2) == 3);
  CHECK(t.free_shapes.of_size(4) == 1);
  CHECK(t.free_shapes.of_size(8) == 0);
}

}  // namespace
}  // namespace topofit::cluster
