// Explain: every node's verdict, candidate set, bandwidth, links and score parts - without changes.
#include "extender/placement/explain.h"

#include <doctest/doctest.h>

#include "extender/placement/testing/placement_fixture.h"

namespace topofit::placement {
namespace {

using namespace testing;

TEST_CASE("explain: verdicts - sets - bandwidth and links for every node - best first") {
  PlacementFixture f({{"dgx", 8, "dgx1-v100"}, {"pcie", 8, "pcie-8-dual-socket"}, {"small", 2, "phb-2-workstation"}});
  Explanation e = Explain(f.pipeline, Request("p", 4));
  CHECK(e.pod == "default/pod-p");
  CHECK(e.gpus == 4);
  CHECK(e.policy == "best-effort");
  CHECK(e.min_link.empty());
  REQUIRE(e.nodes.size() == 3);
  CHECK(e.nodes[0].node == "dgx");
  REQUIRE(e.chosen);
  CHECK(*e.chosen == "dgx");
  const NodeExplanation& dgx = e.nodes[0];
  CHECK(dgx.code == FilterCode::kPass);
  REQUIRE(dgx.set);
  CHECK(dgx.set->size() == 4);
  CHECK(dgx.bandwidth_gbps > 0);
  CHECK(dgx.worst_link.rfind("NV", 0) == 0);
  CHECK_FALSE(dgx.links.empty());
  REQUIRE(dgx.parts.size() == 2);  // The default parts: SetQuality, FragmentationGradient.
  CHECK(dgx.parts[1].plugin == "FragmentationGradient");
  // Explain scores with the estimate as prioritize would (the pod counted) but observes nothing.
  CHECK(e.workload == "1 GPU pod seen (half-life 2000): 4 GPUs 100%");
  CHECK(f.pipeline.workload().Snapshot()->observed == 0);
  f.pipeline.workload().Observe(Request("seen", 8));
  CHECK(Explain(f.pipeline, Request("p", 4)).workload == "2 GPU pods seen (half-life 2000): 4 GPUs 50%, 8 GPUs 50%");
  CHECK(dgx.score > e.nodes[1].score);
  const NodeExplanation& small = e.nodes[2];
  CHECK(small.node == "small");
  CHECK(small.code == FilterCode::kUnresolvable);
  CHECK(small.reason == "4 GPUs requested, node has 2");
  CHECK_FALSE(small.set);
  CHECK(small.score == 0);
}

TEST_CASE("explain: a given node list - unknown names and annotation errors") {
  PlacementFixture f({{"pcie", 4, "pcie-4-single-socket"}});
  std::vector<std::string> names{"pcie", "ghost"};
  Explanation e = Explain(f.pipeline, Request("p", 2, Required()), names);
  CHECK(e.policy == "required");
  CHECK(e.min_link == "NV");
  REQUIRE(e.nodes.size() == 2);
  CHECK(e.nodes[0].reason == "unknown node");  // Sorted by name among failures.
  CHECK(e.nodes[1].reason == "required: no NVLink-connected set of 2 on this node");
  CHECK_FALSE(e.chosen);
  Explanation bad = Explain(f.pipeline, Request("p", 2, {{k8s::kMinLinkAnnotation, "fast"}}), names);
  CHECK(bad.error == "invalid topofit.io/min-link 'fast': expected NV, PIX, PXB, PHB, NODE or SYS");
  for (const auto& n : bad.nodes) CHECK(n.code == FilterCode::kUnresolvable);
}

TEST_CASE("explain: does not change the model") {
  PlacementFixture f({{"dgx", 8, "dgx1-v100"}});
  f.model.ApplyPod(MakePod("a", 2, "dgx", "0,1"));
  uint64_t version = f.model.Read().Find("dgx")->version();
  auto before = f.model.Node("dgx");
  for (int k = 1; k <= 8; ++k) (void)Explain(f.pipeline, Request("p" + std::to_string(k), k));
  auto after = f.model.Node("dgx");
  CHECK(after->free == before->free);
  CHECK(after->pods.size() == 1);
  CHECK(f.model.Read().Find("dgx")->version() == version);
  CHECK(f.model.Totals().reserved_gpus == 0);
  CHECK_FALSE(f.model.PodByUid("p4"));
}

TEST_CASE("placement summary: GPUs, links, bandwidth, then the node's score parts without SetQuality") {
  PlacementFixture f({{"dgx", 8, "dgx1-v100"}, {"one", 1, "generic-pcie-1"}});
  std::vector<std::string> dgx{"dgx"};
  Explanation e = Explain(f.pipeline, Request("p", 4), dgx);
  REQUIRE(e.nodes.size() == 1);
  REQUIRE(e.nodes[0].set);
  const GpuSet set = *e.nodes[0].set;
  std::string s = PlacementSummary(e.nodes[0], set);
  CAPTURE(s);
  CHECK(s.starts_with("GPUs " + set.ToString() + " on dgx over NV"));
  CHECK(s.find(" links, ") != std::string::npos);
  CHECK(s.find(" GB/s predicted ring all-reduce; node scores: ") != std::string::npos);
  CHECK(s.find("SetQuality") == std::string::npos);
  CHECK(s.find("FragmentationGradient") != std::string::npos);

  std::vector<std::string> one{"one"};
  Explanation single = Explain(f.pipeline, Request("q", 1), one);
  REQUIRE(single.nodes[0].set);
  std::string t = PlacementSummary(single.nodes[0], *single.nodes[0].set);
  CHECK(t.starts_with("GPU 0 on one; node scores: "));
  CHECK(t.find("GB/s") == std::string::npos);
}

}  // namespace
}  // namespace topofit::placement
