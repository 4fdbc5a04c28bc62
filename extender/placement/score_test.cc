// Prioritize: integer scores 0..10, packing for small pods, interconnect for big ones.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>

#include "extender/placement/pipeline.h"
#include "extender/placement/testing/placement_fixture.h"
#include "extender/placement/testing/scores.h"

namespace topofit::placement {
namespace {

using namespace testing;

TEST_CASE("score: a 1-GPU pod prefers the half-used DGX-1 over an empty one (packing)") {
  PlacementFixture f({{"half", 8, "dgx1-v100"}, {"empty", 8, "dgx1-v100"}});
  f.model.ApplyPod(MakePod("a", 4, "half", "0,1,2,3"));
  // Packing follows from the workload: once an 8-GPU pod has been seen, opening the empty node costs
  // it its 8 free GPUs. (With 1-GPU pods alone, every free GPU stays usable and both nodes tie.)
  f.pipeline.workload().Observe(Request("eight", 8));
  auto s = Scores(f.pipeline, Request("p", 1), {"half", "empty"});
  CHECK(s["half"] > s["empty"]);
  for (auto [name, score] : s) {
    CHECK(score >= 0);
    CHECK(score <= 10);
  }
}

TEST_CASE("score: a 4-GPU pod prefers a node offering an NVLink quad") {
  PlacementFixture f({{"quad", 8, "dgx1-v100"}, {"broken", 8, "dgx1-v100"}, {"pcie", 8, "pcie-8-dual-socket"}});
  f.model.ApplyPod(MakePod("a", 4, "quad", "0,1,2,3"));     // Free 4-7: a fully meshed quad.
  f.model.ApplyPod(MakePod("b", 4, "broken", "2,3,4,5"));   // Free 0,1,6,7: two NVLink pairs joined by SYS.
  auto s = Scores(f.pipeline, Request("p", 4), {"quad", "broken", "pcie"});
  CHECK(s["quad"] > s["broken"]);
  CHECK(s["quad"] > s["pcie"]);
}

TEST_CASE("score: failing and unknown nodes score 0 - pods without GPUs score 0 everywhere") {
  PlacementFixture f({{"full", 2, "phb-2-workstation"}, {"free", 2, "phb-2-workstation"}});
  f.model.ApplyPod(MakePod("a", 2, "full", "0,1"));
  auto s = Scores(f.pipeline, Request("p", 1), {"full", "free", "ghost"});
  CHECK(s["full"] == 0);
  CHECK(s["ghost"] == 0);
  CHECK(s["free"] > 0);
  auto none = Scores(f.pipeline, Request("q", 0), {"full", "free"});
  CHECK(none["full"] == 0);
  CHECK(none["free"] == 0);
}

TEST_CASE("score: evaluation exposes the parts and the weighted formula") {
  cluster::ClusterModel model;
  PipelineConfig config;  // Every built-in part, absolute levels: the formula of pipeline_config.h.
  config.weights = {{"SetQuality", 2.0}, {"Packing", 1.0}, {"Fragmentation", 1.0}, {"Stranding", 2.0}};
  config.relative_levels = false;
  Pipeline pipeline(&model, config);
  model.ApplyNode(MakeNode("n", 8, "hgx-a100-8"));
  std::vector<std::string_view> names{"n"};
  auto evals = pipeline.Evaluate(Request("p", 2), names);
  REQUIRE(evals.size() == 1);
  const NodeEvaluation& e = evals[0];
  CHECK(e.status.passed());
  REQUIRE(e.parts.size() == 4);
  CHECK(e.parts[0].plugin == "SetQuality");
  CHECK(e.parts[1].plugin == "Packing");
  CHECK(e.parts[2].plugin == "Fragmentation");
  CHECK(e.parts[3].plugin == "Stranding");
  double total = 0, weights = 0;
  for (const auto& p : e.parts) {
    CHECK(p.value >= 0.0);
    CHECK(p.value <= 1.0);
    total += p.weight * p.value;
    weights += p.weight;
  }
  CHECK(e.parts[0].value == doctest::Approx(1.0));   // The only node is the best node.
  CHECK(e.parts[1].value == doctest::Approx(2.0 / 8));
  CHECK(e.score == static_cast<int>(std::lround(10 * total / weights)));
}

TEST_CASE("score: weights are configurable and validated") {
  cluster::ClusterModel model;
  PipelineConfig packing_only;
  packing_only.weights = {{"Packing", 1.0}};
  packing_only.relative_levels = false;
  CHECK(Pipeline::Validate(packing_only).ok());
  Pipeline pipeline(&model, packing_only);
  model.ApplyNode(MakeNode("n", 4, "pcie-4-single-socket"));
  model.ApplyPod(MakePod("a", 1, "n", "0"));
  auto s = Scores(pipeline, Request("p", 1), {"n"});
  CHECK(s["n"] == 5);  // (1 used + 1) / 4 = 0.5 -> 5

  PipelineConfig bad;
  bad.weights = {{"Nope", 1.0}};
  Status st = Pipeline::Validate(bad);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().rfind("unknown score plugin 'Nope'", 0) == 0);
  bad.weights = {{"Packing", -1.0}};
  CHECK_FALSE(Pipeline::Validate(bad).ok());
  bad.weights = {{"Packing", 0.0}};
  CHECK_FALSE(Pipeline::Validate(bad).ok());
  CHECK(Pipeline::Validate(PipelineConfig{}).ok());
}

TEST_CASE("score: policy none ignores set quality") {
  PlacementFixture f({{"nv", 8, "hgx-a100-8"}, {"pcie", 8, "pcie-8-dual-socket"}});
  std::vector<std::string_view> names{"nv", "pcie"};
  auto evals = f.pipeline.Evaluate(Request("p", 2, {{k8s::kTopologyPolicyAnnotation, "none"}}), names);
  CHECK(evals[0].parts[0].value == doctest::Approx(1.0));
  CHECK(evals[1].parts[0].value == doctest::Approx(1.0));
  // Best-effort: the slower ring is priced (FragmentationGradient's trade, at the default rate), and
  // SetQuality, which holds only the min-link then, stays 1; with R = .inf SetQuality is the ring ratio.
  auto be = f.pipeline.Evaluate(Request("p", 2), names);
  CHECK(be[1].parts[0].value == doctest::Approx(1.0));
  CHECK(be[1].trade->interconnect_gpus > 0);
  CHECK(evals[1].trade->interconnect_gpus == 0);
  PipelineConfig lexicographic;
  lexicographic.interconnect_rate = std::numeric_limits<double>::infinity();
  Pipeline lex(&f.model, lexicographic);
  CHECK(lex.Evaluate(Request("p", 2), names)[1].parts[0].value < 1.0);
}

}  // namespace
}  // namespace topofit::placement
