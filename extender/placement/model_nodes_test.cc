// Nodes as the model sees them: topology source and warnings visible to readers, partial nodes.
#include <doctest/doctest.h>

#include <map>

#include "extender/placement/pipeline.h"
#include "extender/placement/testing/placement_fixture.h"

namespace topofit::placement {
namespace {

using namespace testing;

TEST_CASE("nodes: a node with a broken topology annotation schedules - and readers see the warning") {
  PlacementFixture f({{"n", 4, "not-a-profile"}});
  auto info = f.model.Node("n");
  REQUIRE(info);
  CHECK(info->source == cluster::TopologySource::kGenericFallback);
  CHECK(info->profile == "generic-pcie-4");
  REQUIRE(info->warnings.size() == 1);
  CHECK(info->warnings[0].rfind("topofit.io/gpu-topology 'not-a-profile': unknown profile", 0) == 0);
  CHECK(f.model.Totals().nodes_with_warnings == 1);
  std::vector<std::string> names{"n"};
  CHECK(f.pipeline.Filter(Request("p", 2), names).passed.size() == 1);
  CHECK(f.pipeline.ReserveBest(Request("p", 2), "n").ok());
}

TEST_CASE("nodes: fewer allocatable GPUs than the topology - only the first ones are granted") {
  PlacementFixture f({{"n", 6, "dgx1-v100"}});
  auto info = f.model.Node("n");
  CHECK(info->gpu_count == 8);
  CHECK(info->usable == GpuSet::FirstN(6));
  CHECK(info->free == GpuSet::FirstN(6));
  std::vector<std::string> names{"n"};
  auto out = f.pipeline.Filter(Request("p", 8), names);
  REQUIRE(out.unresolvable.size() == 1);
  CHECK(out.unresolvable[0].reason == "8 GPUs requested, node has 6");
  auto r = f.pipeline.ReserveBest(Request("q", 6), "n");
  REQUIRE(r.ok());
  CHECK(*r == GpuSet::FirstN(6));
}

TEST_CASE("nodes: best-effort min-link picks a set meeting it when one is free - else the best other") {
  PlacementFixture f({{"n", 8, "dgx1-v100"}});
  auto nv = Request("p", 2, {{k8s::kMinLinkAnnotation, "NV"}});
  auto r = f.pipeline.ReserveBest(nv, "n");
  REQUIRE(r.ok());
  auto topo = f.model.Node("n")->topology;
  auto idx = r->Indices();
  CHECK(topo->link(idx[0], idx[1]).cls == LinkClass::Nv);
  REQUIRE(f.pipeline.Release("p").ok());
  // Leave only GPUs 0 and 7 free: SYS between them. Best-effort still places the pod there.
  f.model.ApplyPod(MakePod("a", 6, "n", "1,2,3,4,5,6"));
  auto fallback = f.pipeline.ReserveBest(nv, "n");
  REQUIRE(fallback.ok());
  CHECK(*fallback == GpuSet::Of({0, 7}));
  std::vector<std::string_view> names{"n"};
  REQUIRE(f.pipeline.Release("p").ok());
  auto eval = f.pipeline.Evaluate(nv, names);
  CHECK_FALSE(eval[0].candidate.meets_min_link);
  CHECK(eval[0].parts[0].value == doctest::Approx(0.5));  // Only node, but it misses the min-link.
}

TEST_CASE("nodes: deleting a node drops its reservations but remembers its bound pods") {
  PlacementFixture f({{"n", 4, "pcie-4-single-socket"}});
  f.model.ApplyPod(MakePod("bound", 1, "n", "0"));
  REQUIRE(f.pipeline.ReserveBest(Request("res", 1), "n").ok());
  f.model.DeleteNode("n");
  CHECK_FALSE(f.model.PodByUid("res"));
  CHECK(f.model.PodByUid("bound"));
  std::vector<std::string> names{"n"};
  CHECK(f.pipeline.Filter(Request("p", 1), names).unresolvable[0].reason == "unknown node");
  f.model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  CHECK(f.model.Node("n")->free == GpuSet::Of({1, 2, 3}));
}

}  // namespace
}  // namespace topofit::placement

namespace topofit::placement {
namespace {

TEST_CASE("model nodes: views carry the Node's labels, also after a change of labels alone") {
  cluster::ClusterModel model;
  auto node = cluster::testing::MakeNode("n", 8, "dgx1-v100", {{"zone", "a"}});
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
  model.ApplyNode(cluster::testing::MakeNode("n", 8, "dgx1-v100"));
  CHECK(model.Node("n")->labels.empty());
}

TEST_CASE("nodes: the free GPUs by model follow every change - pods, reservations, replaced and deleted nodes") {
  using namespace std::chrono_literals;
  cluster::FakeClock clock;
  cluster::ClusterModel model(cluster::ModelOptions{.reservation_ttl = 30s, .clock = &clock});
  Pipeline pipeline(&model);
  auto node = [&](const std::string& name, int gpus, const std::string& topology, const std::string& product) {
    k8s::NodeObject n = MakeNode(name, gpus, topology);
    if (!product.empty()) n.meta.labels[k8s::kGfdProductLabel] = product;
    model.ApplyNode(n);
  };
  // What every node's own free mask adds up to, by model.
  auto by_hand = [&] {
    std::map<uint32_t, int64_t> out;
    model.Read().ForEach([&](const cluster::NodeState& n) {
      if (n.topology()) out[n.product_id()] += n.free().size();
    });
    return out;
  };
  auto counted = [&] {
    std::map<uint32_t, int64_t> out;
    const cluster::FreeGpus f = model.Read().FreeByProduct();
    int64_t total = 0;
    for (const auto& [p, n] : f.by_product) {
      if (n != 0) out[p] = n;
      total += n;
    }
    CHECK(total == f.total);
    return out;
  };
  auto same = [&](const char* step) {
    CAPTURE(step);
    auto want = by_hand();
    std::erase_if(want, [](const auto& e) { return e.second == 0; });
    CHECK(counted() == want);
  };
  node("v1", 8, "dgx1-v100", "V100");
  node("v2", 8, "dgx1-v100", "V100");
  node("t1", 2, "phb-2-workstation", "T4");
  node("u", 4, "pcie-4-single-socket", "");  // Unknown model: product 0.
  node("cpu", 0, "", "");                     // No GPUs: counts nothing.
  same("nodes applied");
  CHECK(model.Read().FreeByProduct().total == 22);
  model.ApplyPod(MakePod("a", 4, "v1", "0,1,2,3"));
  model.ApplyPod(MakePod("b", 1, "t1", "0"));
  same("pods bound");
  REQUIRE(pipeline.ReserveBest(Request("r1", 2), "v2").ok());
  REQUIRE(pipeline.ReserveBest(Request("r2", 2), "u").ok());
  same("reserved");
  CHECK(pipeline.Release("r1").ok());
  CHECK(pipeline.Confirm("r2").ok());
  same("released and confirmed");
  REQUIRE(pipeline.ReserveBest(Request("r3", 4), "v2").ok());
  clock.Advance(31s);
  CHECK(model.ExpireReservations() == 1);
  same("expired");
  model.ApplyNode(MakeNode("v1", 8, "pcie-8-dual-socket", {{k8s::kGfdProductLabel, "V100"}}));  // Replaced.
  same("node replaced, its pod kept");
  model.ApplyNode(MakeNode("t1", 4, "pcie-4-single-socket", {{k8s::kGfdProductLabel, "A10"}}));  // Other model.
  same("node moved to another model");
  model.DeletePod("a");
  model.DeleteNode("v2");
  model.DeleteNode("nothing-by-that-name");
  same("pod and node deleted");
  CHECK(model.Read().FreeByProduct().Of(cluster::GpuProductId("V100")) == 8);
  CHECK(model.Read().FreeByProduct().Of(cluster::GpuProductId("A10")) == 3);
}

}  // namespace
}  // namespace topofit::placement
