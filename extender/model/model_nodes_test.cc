// Nodes as the model sees them: topology source and warnings visible to readers, partial nodes.
#include <doctest/doctest.h>

#include "extender/model/cluster_model.h"
#include "extender/model/model_test_util.h"
#include "extender/model/pipeline.h"

namespace topofit::model {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Request;

TEST_CASE("nodes: a node with a broken topology annotation schedules - and readers see the warning") {
  ClusterModel model;
  Pipeline pipeline(&model);
  model.ApplyNode(MakeNode("n", 4, "not-a-profile"));
  auto info = model.Node("n");
  REQUIRE(info);
  CHECK(info->source == TopologySource::kGenericFallback);
  CHECK(info->profile == "generic-pcie-4");
  REQUIRE(info->warnings.size() == 1);
  CHECK(info->warnings[0].rfind("topofit.io/gpu-topology 'not-a-profile': unknown profile", 0) == 0);
  CHECK(model.Totals().nodes_with_warnings == 1);
  std::vector<std::string> names{"n"};
  CHECK(pipeline.Filter(Request("p", 2), names).passed.size() == 1);
  CHECK(pipeline.ReserveBest(Request("p", 2), "n").ok());
}

TEST_CASE("nodes: fewer allocatable GPUs than the topology - only the first ones are granted") {
  ClusterModel model;
  Pipeline pipeline(&model);
  model.ApplyNode(MakeNode("n", 6, "dgx1-v100"));
  auto info = model.Node("n");
  CHECK(info->gpu_count == 8);
  CHECK(info->usable == GpuSet::FirstN(6));
  CHECK(info->free == GpuSet::FirstN(6));
  std::vector<std::string> names{"n"};
  auto out = pipeline.Filter(Request("p", 8), names);
  REQUIRE(out.unresolvable.size() == 1);
  CHECK(out.unresolvable[0].reason == "8 GPUs requested, node has 6");
  auto r = pipeline.ReserveBest(Request("q", 6), "n");
  REQUIRE(r.ok());
  CHECK(*r == GpuSet::FirstN(6));
}

TEST_CASE("nodes: best-effort min-link picks a set meeting it when one is free - else the best other") {
  ClusterModel model;
  Pipeline pipeline(&model);
  model.ApplyNode(MakeNode("n", 8, "dgx1-v100"));
  auto nv = Request("p", 2, {{k8s::kMinLinkAnnotation, "NV"}});
  auto r = pipeline.ReserveBest(nv, "n");
  REQUIRE(r.ok());
  auto topo = model.Node("n")->topology;
  auto idx = r->Indices();
  CHECK(topo->link(idx[0], idx[1]).cls == LinkClass::Nv);
  REQUIRE(pipeline.Release("p").ok());
  // Leave only GPUs 0 and 7 free: SYS between them. Best-effort still places the pod there.
  model.ApplyPod(MakePod("a", 6, "n", "1,2,3,4,5,6"));
  auto fallback = pipeline.ReserveBest(nv, "n");
  REQUIRE(fallback.ok());
  CHECK(*fallback == GpuSet::Of({0, 7}));
  std::vector<std::string_view> names{"n"};
  REQUIRE(pipeline.Release("p").ok());
  auto eval = pipeline.Evaluate(nv, names);
  CHECK_FALSE(eval[0].candidate.meets_min_link);
  CHECK(eval[0].parts[0].value == doctest::Approx(0.5));  // Only node, but it misses the min-link.
}

TEST_CASE("nodes: deleting a node drops its reservations but remembers its bound pods") {
  ClusterModel model;
  Pipeline pipeline(&model);
  model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  model.ApplyPod(MakePod("bound", 1, "n", "0"));
  REQUIRE(pipeline.ReserveBest(Request("res", 1), "n").ok());
  model.DeleteNode("n");
  CHECK_FALSE(model.PodByUid("res"));
  CHECK(model.PodByUid("bound"));
  std::vector<std::string> names{"n"};
  CHECK(pipeline.Filter(Request("p", 1), names).unresolvable[0].reason == "unknown node");
  model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  CHECK(model.Node("n")->free == GpuSet::Of({1, 2, 3}));
}

}  // namespace
}  // namespace topofit::model

namespace topofit::model {
namespace {

TEST_CASE("model nodes: views carry the Node's labels, also after a change of labels alone") {
  ClusterModel model;
  auto node = testing::MakeNode("n", 8, "dgx1-v100", {{"zone", "a"}});
  model.ApplyNode(node);
  auto info = model.Node("n");
  REQUIRE(info);
  CHECK(info->labels == std::map<std::string, std::string>{{"zone", "a"}});
  auto topology = info->topology;
  node.meta.labels["zone"] = "b";
  model.ApplyNode(node);
  info = model.Node("n");
  CHECK(info->labels.at("zone") == "b");
  CHECK(info->topology == topology);  // The topology inputs did not change, nor did the topology.
  model.DeleteNode("n");
  model.ApplyNode(testing::MakeNode("n", 8, "dgx1-v100"));
  CHECK(model.Node("n")->labels.empty());
}

}  // namespace
}  // namespace topofit::model
