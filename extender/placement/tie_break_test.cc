// TieBreak on small hand-made clusters: which nodes of the best band keep the 10 (tie_break.h).
// bench/policies_test.cc shows the same rule through kube-scheduler's in-tree scores (LeastAllocated
// spreads without it).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "extender/placement/pipeline.h"
#include "extender/placement/testing/placement_fixture.h"
#include "extender/placement/testing/scores.h"
#include "extender/placement/tie_break.h"

namespace topofit::placement {
namespace {

using namespace testing;

// A bound pod holding `gpus` GPUs (ids "0,1,...") and `cores` cores on `node`.
void Hold(cluster::ClusterModel& model, const std::string& uid, const std::string& node, int gpus, int64_t cores) {
  std::string ids;
  for (int g = 0; g < gpus; ++g) ids += (g ? "," : "") + std::to_string(g);
  k8s::PodObject p = MakePod(uid, gpus, node, ids);
  p.cpu_milli = cores * 1000;
  p.memory_bytes = cores * 4 * kGiB;
  model.ApplyPod(p);
}

cluster::PodRequest Pod(const std::string& uid, int gpus, int64_t cores) {
  cluster::PodRequest r = cluster::testing::Request(uid, gpus);
  r.cpu_milli = cores * 1000;
  r.memory_bytes = cores * 4 * kGiB;
  return r;
}

PipelineConfig Rule(TieBreak rule) {
  PipelineConfig c;
  c.tie_break = rule;
  return c;
}

TEST_CASE("tie-break: names parse and print") {
  for (TieBreak r : {TieBreak::kNone, TieBreak::kFitThenPack, TieBreak::kPack}) CHECK(ParseTieBreak(ToString(r)) == r);
  CHECK_FALSE(ParseTieBreak("spread").has_value());
  CHECK(PipelineConfig{}.tie_break == TieBreak::kFitThenPack);
}

TEST_CASE("tie-break fit-then-pack: a 1-GPU pod goes to the node with the fewest GPUs left, not the empty one") {
  cluster::ClusterModel model;
  AddNode(model, "empty", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "used", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "half", 8, "pcie-8-dual-socket", 96, 384);
  Hold(model, "a", "used", 6, 24);  // 2 GPUs free
  Hold(model, "b", "half", 4, 16);  // 4 GPUs free
  const std::vector<std::string> names{"empty", "used", "half"};
  const cluster::PodRequest pod = Pod("new", 1, 4);
  // The workload is the pod itself (one 1-GPU shape): it fits after on every node, frag 0 -> 0, so
  // FragmentationGradient ties all three; without a rule all get 10, and LeastAllocated would pick
  // "empty" (most CPU and memory free).
  Pipeline none(&model, Rule(TieBreak::kNone));
  auto n = Scores(none, pod, names);
  CHECK(n["empty"] == 10);
  CHECK(n["used"] == 10);
  CHECK(n["half"] == 10);
  Pipeline fit(&model, Rule(TieBreak::kFitThenPack));
  auto f = Scores(fit, pod, names);
  CHECK(f["used"] == 10);
  CHECK(f["half"] == 5);
  CHECK(f["empty"] == 5);
  // Explain gives the same levels.
  std::vector<std::string_view> views{"empty", "used", "half"};
  auto evals = fit.Evaluate(pod, views);
  CHECK(evals[0].score == 5);
  CHECK(evals[1].score == 10);
  CHECK(evals[2].score == 5);
}

TEST_CASE("tie-break fit-then-pack: equal free GPUs, the node with more CPU and memory allocated wins") {
  cluster::ClusterModel model;
  AddNode(model, "light", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "heavy", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "twin", 8, "pcie-8-dual-socket", 96, 384);
  Hold(model, "a", "light", 4, 8);
  Hold(model, "b", "heavy", 4, 40);
  Hold(model, "c", "twin", 4, 40);
  const std::vector<std::string> names{"light", "heavy", "twin"};
  Pipeline fit(&model, Rule(TieBreak::kFitThenPack));
  auto s = Scores(fit, Pod("new", 1, 4), names);
  CHECK(s["light"] == 5);
  // Exact ties keep the 10 together: kube-scheduler's in-tree scores choose between them.
  CHECK(s["heavy"] == 10);
  CHECK(s["twin"] == 10);
}

TEST_CASE("tie-break pack: one share over GPUs, CPU and memory") {
  cluster::ClusterModel model;
  AddNode(model, "gpus-full", 8, "pcie-8-dual-socket", 96, 384);  // 6 of 8 GPUs, little CPU
  AddNode(model, "cpu-full", 8, "pcie-8-dual-socket", 96, 384);   // 4 of 8 GPUs, most CPU
  Hold(model, "a", "gpus-full", 6, 8);
  Hold(model, "b", "cpu-full", 4, 80);
  const std::vector<std::string> names{"gpus-full", "cpu-full"};
  const cluster::PodRequest pod = Pod("new", 1, 4);
  std::vector<std::string_view> views{"gpus-full", "cpu-full"};
  auto reader = model.Read();
  const cluster::NodeState* g = nullptr;
  const cluster::NodeState* c = nullptr;
  reader.FindEach(views, [&](uint32_t i, const cluster::NodeState* n) { (i == 0 ? g : c) = n; });
  REQUIRE(g);
  REQUIRE(c);
  const TieKey kg = TieKeyOf(TieBreak::kPack, NodeView{"gpus-full", g, g->free()}, pod);
  const TieKey kc = TieKeyOf(TieBreak::kPack, NodeView{"cpu-full", c, c->free()}, pod);
  // gpus-full: (7/8 + 12/96 + 48/384) / 3; cpu-full: (5/8 + 84/96 + 336/384) / 3.
  CHECK(kg.share_after == doctest::Approx((7.0 / 8 + 12.0 / 96 + 48.0 / 384) / 3));
  CHECK(kc.share_after == doctest::Approx((5.0 / 8 + 84.0 / 96 + 336.0 / 384) / 3));
  CHECK(TieKey::Better(kc, kg));
  // fit-then-pack orders them the other way: fewer GPUs left first.
  CHECK(TieKey::Better(TieKeyOf(TieBreak::kFitThenPack, NodeView{"gpus-full", g, g->free()}, pod),
                       TieKeyOf(TieBreak::kFitThenPack, NodeView{"cpu-full", c, c->free()}, pod)));
}

TEST_CASE("tie-break fit-then-pack: a pod without GPUs goes where no GPU is free") {
  cluster::ClusterModel model;
  AddNode(model, "cpu-only", 0, "", 64, 256);
  AddNode(model, "gpus-taken", 2, "phb-2-workstation", 64, 256);
  AddNode(model, "gpus-free", 2, "phb-2-workstation", 64, 256);
  Hold(model, "a", "gpus-taken", 2, 8);
  const std::vector<std::string> all{"cpu-only", "gpus-taken", "gpus-free"};
  const std::vector<std::string> two{"cpu-only", "gpus-free"};
  PipelineConfig config = Rule(TieBreak::kFitThenPack);
  config.score_pods_without_gpus = true;
  Pipeline pipeline(&model, config);
  // The workload: 1-GPU pods of 4 cores; a 4-core CPU-only pod leaves every node fitting them.
  for (int i = 0; i < 4; ++i) pipeline.workload().Observe(Pod("w" + std::to_string(i), 1, 4));
  const cluster::PodRequest cpu_pod = Pod("cpu", 0, 4);
  // No free GPU on cpu-only and gpus-taken; gpus-taken has more CPU and memory allocated.
  auto s = Scores(pipeline, cpu_pod, all);
  CHECK(s["gpus-taken"] == 10);
  CHECK(s["cpu-only"] == 5);
  CHECK(s["gpus-free"] == 5);
  auto t = Scores(pipeline, cpu_pod, two);
  CHECK(t["cpu-only"] == 10);
  CHECK(t["gpus-free"] == 5);
}

TEST_CASE("tie-break: absolute levels are not changed by it, nor nodes below the band") {
  cluster::ClusterModel model;
  AddNode(model, "a100", 8, "hgx-a100-8", 96, 384);
  AddNode(model, "pcie", 8, "pcie-8-dual-socket", 96, 384);
  Hold(model, "x", "a100", 4, 16);
  const std::vector<std::string> names{"a100", "pcie"};
  const cluster::PodRequest pod = Pod("new", 4, 16);
  // A 4-GPU pod: the NVSwitch node's set is faster, so it is the band alone.
  Pipeline fit(&model, Rule(TieBreak::kFitThenPack));
  auto s = Scores(fit, pod, names);
  CHECK(s["a100"] == 10);
  CHECK(s["pcie"] < 10);
  PipelineConfig absolute = Rule(TieBreak::kFitThenPack);
  absolute.relative_levels = false;
  PipelineConfig absolute_none = absolute;
  absolute_none.tie_break = TieBreak::kNone;
  Pipeline a(&model, absolute), b(&model, absolute_none);
  CHECK(Scores(a, pod, names) == Scores(b, pod, names));
}

// TieKey::Better as it was written with branches: the order the branch-free form must keep.
bool BetterByBranches(const TieKey& a, const TieKey& b) {
  if (a.band_loss < b.band_loss - TieKey::kTie) return true;
  if (b.band_loss < a.band_loss - TieKey::kTie) return false;
  if (a.free_gpus_after != b.free_gpus_after) return a.free_gpus_after < b.free_gpus_after;
  return a.share_after > b.share_after + TieKey::kTie;
}

// Every pair of keys whose losses and shares lie at the tolerance's edges (and NaN), with 0-2 free
// GPUs after: f(a, b) for each.
template <typename F>
void ForEachEdgePair(F f) {
  const double t = TieKey::kTie;
  const std::vector<double> losses{0, t / 2, t, 1.5 * t, 3 * t, 1, 1 + t, std::nan("")};
  const std::vector<double> shares{0, 0.5, 0.5 + t / 2, 0.5 + t, 0.5 + 2 * t, std::nan("")};
  for (double la : losses)
    for (double lb : losses)
      for (int fa : {0, 1, 2})
        for (int fb : {0, 1, 2})
          for (double sa : shares)
            for (double sb : shares) f(TieKey{la, fa, sa}, TieKey{lb, fb, sb});
}

TEST_CASE("TieKey::Better without branches orders every pair as the branches did, at the edges and with NaN") {
  int better = 0, pairs = 0;
  ForEachEdgePair([&](const TieKey& a, const TieKey& b) {
    CHECK(TieKey::Better(a, b) == BetterByBranches(a, b));
    better += BetterByBranches(a, b);
    ++pairs;
  });
  CHECK(better > 0);
  CHECK(better < pairs);
}

TEST_CASE("TieKey::Tied is !Better(a, b) && !Better(b, a), at the tolerance's edges and with NaN") {
  int pairs = 0, tied = 0;
  ForEachEdgePair([&](const TieKey& a, const TieKey& b) {
    const bool want = !TieKey::Better(a, b) && !TieKey::Better(b, a);
    CHECK(TieKey::Tied(a, b) == want);
    ++pairs;
    tied += want;
  });
  CHECK(tied > 0);
  CHECK(tied < pairs);
}

}  // namespace
}  // namespace topofit::placement
