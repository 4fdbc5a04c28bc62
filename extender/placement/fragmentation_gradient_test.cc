// FragmentationGradient on small hand-made clusters where the right node is known. Each case also
// runs the scoring topofit had before this plugin (SetQuality 2, Packing 1, Fragmentation 1,
// Stranding 2, absolute levels: OldScoring below) and checks that it does not make the right choice,
// so the case shows what the workload-aware score adds.
#include <doctest/doctest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "extender/placement/explain.h"
#include "extender/placement/pipeline.h"
#include "extender/placement/score_plugins.h"
#include "extender/placement/testing/placement_fixture.h"
#include "extender/placement/testing/scores.h"

namespace topofit::placement {
namespace {

using namespace testing;

PipelineConfig OldScoring() {
  PipelineConfig c;
  c.weights = {{"SetQuality", 2.0}, {"Packing", 1.0}, {"Fragmentation", 1.0}, {"Stranding", 2.0}};
  c.relative_levels = false;
  return c;
}

cluster::PodRequest Pod(const std::string& uid, int gpus, int64_t cores, int64_t mem_gib, std::vector<std::string> products = {}) {
  cluster::PodRequest r = cluster::testing::Request(uid, gpus);
  r.cpu_milli = cores * 1000;
  r.memory_bytes = mem_gib * kGiB;
  r.gpu_products = std::move(products);
  return r;
}

TEST_CASE("fragmentation gradient: a model-agnostic pod leaves the model that bound pods need") {
  cluster::ClusterModel model;
  AddNode(model, "p100", 2, "phb-2-workstation", 32, 128, "P100");
  AddNode(model, "t4", 2, "phb-2-workstation", 32, 128, "T4");
  model.ApplyPod(MakePod("held", 1, "p100", "0"));  // p100: 1 GPU free, t4: 2.
  const std::vector<std::string> names{"p100", "t4"};
  Pipeline pipeline(&model);
  // The workload so far: 4 of 5 pods may run only on P100.
  for (int i = 0; i < 8; ++i) pipeline.workload().Observe(Pod("bound" + std::to_string(i), 1, 4, 16, {"P100"}));
  for (int i = 0; i < 2; ++i) pipeline.workload().Observe(Pod("any" + std::to_string(i), 1, 4, 16));
  // An agnostic pod on p100 takes the GPU a P100 pod needs (frag 0 -> 0); on t4 it takes a GPU that
  // 80% of the workload cannot use (frag 1.6 -> 0.8): t4, although p100 is the fuller node.
  const cluster::PodRequest pod = Pod("new", 1, 4, 16);
  auto s = Scores(pipeline, pod, names);
  CHECK(s["t4"] == 10);
  CHECK(s["p100"] < s["t4"]);
  std::vector<std::string_view> views{"p100", "t4"};
  auto evals = pipeline.Evaluate(pod, views);
  REQUIRE(evals[1].parts.size() == 2);
  CHECK(evals[1].parts[1].plugin == "FragmentationGradient");
  // The score before: Packing prefers the fuller p100, the rest ties.
  Pipeline old(&model, OldScoring());
  auto o = Scores(old, pod, names);
  CHECK(o["p100"] >= o["t4"]);
}

TEST_CASE("fragmentation gradient: a pod that may run anywhere leaves a scarce model's GPUs to its bound pods") {
  // One T4 x2 node beside two G2 x8 nodes. A tenth of the GPUs asked for must be T4 (2 of 20 GPU
  // units: 6 any-model 1-GPU pods with this one, 2 T4-bound, 3 of 4 GPUs): 1.8 of the 18 free GPUs,
  // against the 2 T4 GPUs free.
  auto cluster = [](cluster::ClusterModel& model) {
    AddNode(model, "t4", 2, "phb-2-workstation", 64, 256, "T4");
    AddNode(model, "g2a", 8, "pcie-8-dual-socket", 96, 512, "G2");
    AddNode(model, "g2b", 8, "pcie-8-dual-socket", 96, 512, "G2");
  };
  auto observe = [](Pipeline& p, std::vector<std::string> bound_to) {
    for (int i = 0; i < 5; ++i) p.workload().Observe(Pod("any" + std::to_string(i), 1, 4, 16));
    for (int i = 0; i < 2; ++i) p.workload().Observe(Pod("t4-" + std::to_string(i), 1, 4, 16, bound_to));
    for (int i = 0; i < 3; ++i) p.workload().Observe(Pod("four" + std::to_string(i), 4, 16, 64));
  };
  const std::vector<std::string> names{"t4", "g2a", "g2b"};
  const cluster::PodRequest pod = Pod("new", 1, 4, 16);
  // frag alone: on t4 the pod takes a GPU the 4-GPU pods could never use (delta -2 x 3/11 + 1 x 3/11),
  // on g2 one the T4-bound pods cannot use (-2/11): t4 - and with it, the GPU a T4-bound pod needs.
  cluster::ClusterModel unbound_model;
  cluster(unbound_model);
  Pipeline unbound(&unbound_model);
  observe(unbound, {});  // The same sizes, no model named: the shortfall is 0 everywhere.
  CHECK(Scores(unbound, pod, names)["t4"] == 10);
  cluster::ClusterModel model;
  cluster(model);
  Pipeline pipeline(&model);
  observe(pipeline, {"T4"});
  // With the T4-bound pods: on t4, 17 free GPUs would leave 1.7 T4 GPUs wanted against 1 free: the
  // shortfall rises by 0.7 GPUs, more than frag gains there, so a G2 node.
  Explanation e = Explain(pipeline, pod, names);
  CHECK(e.gpu_models == "GPUs model-bound pods will want / free: T4 2/2, best rings on G2 11/16; short 1");
  REQUIRE(e.chosen.has_value());
  CHECK(*e.chosen != "t4");
  auto s = Scores(pipeline, pod, names);
  CHECK(s["g2a"] == 10);
  CHECK(s["g2b"] == 10);
  CHECK(s["t4"] < 10);
  CHECK(Explain(unbound, pod, names).gpu_models == "");
}

TEST_CASE("fragmentation gradient: a small pod keeps the node with CPU for 8-GPU pods whole") {
  cluster::ClusterModel model;
  AddNode(model, "big", 8, "pcie-8-dual-socket", 128, 1024, "G3");  // The only node a 100-core 8-GPU pod fits.
  AddNode(model, "small", 8, "pcie-8-dual-socket", 64, 1024, "G3");
  const std::vector<std::string> names{"big", "small"};
  Pipeline pipeline(&model);
  for (int i = 0; i < 3; ++i) pipeline.workload().Observe(Pod("eight" + std::to_string(i), 8, 100, 256));
  for (int i = 0; i < 7; ++i) pipeline.workload().Observe(Pod("one" + std::to_string(i), 1, 4, 16));
  // On big: 8-GPU pods lose all 7 GPUs left (frag 0 -> 2.1); on small they could never run (2.4 -> 2.1).
  const cluster::PodRequest pod = Pod("new", 1, 4, 16);
  auto s = Scores(pipeline, pod, names);
  CHECK(s["small"] == 10);
  CHECK(s["big"] < 10);
  // Before: the same GPUs free and the pod frugal on both, so every part ties and kube-scheduler's
  // LeastAllocated would then break the tie towards the emptier big node.
  Pipeline old(&model, OldScoring());
  auto o = Scores(old, pod, names);
  CHECK(o["big"] == o["small"]);

  // The 8-GPU pod then finds 8 GPUs and its 100 cores together on big.
  const cluster::PodRequest eight = Pod("eight-new", 8, 100, 256);
  auto e = Scores(pipeline, eight, {"big"});
  CHECK(e["big"] == 10);
}

TEST_CASE("fragmentation gradient: GPUs left without CPU count as lost (it subsumes Stranding)") {
  cluster::ClusterModel model;
  AddNode(model, "starved", 8, "pcie-8-dual-socket", 96, 384, "G2");
  AddNode(model, "fresh", 8, "pcie-8-dual-socket", 96, 384, "G2");
  auto cpu = MakePod("cpu", 0, "starved");
  cpu.cpu_milli = 88000;
  model.ApplyPod(cpu);  // 8 cores left on starved: no 12-core pod fits there any more.
  Pipeline pipeline(&model);
  for (int i = 0; i < 4; ++i) pipeline.workload().Observe(Pod("w" + std::to_string(i), 1, 12, 16));
  // A frugal 1-GPU pod belongs where the GPUs are already stranded: there it turns a GPU lost to the
  // 12-core pods into a used one (frag 8 x 4/5 -> 7 x 4/5); on fresh it takes one they could use.
  auto s = Scores(pipeline, Pod("frugal", 1, 0, 0), {"starved", "fresh"});
  CHECK(s["starved"] == 10);
  CHECK(s["fresh"] < 10);
}

TEST_CASE("fragmentation gradient: a multi-GPU pod still gets the best set in the cluster") {
  cluster::ClusterModel model;
  // quad: free 4-7 of a DGX-1 (an NVLink quad); half: a fresh 8-GPU PCIe node, less fragmented by a
  // 4-GPU pod but slower.
  AddNode(model, "quad", 8, "dgx1-v100", 96, 512, "V100M32");
  AddNode(model, "pcie", 8, "pcie-8-dual-socket", 96, 512, "G2");
  model.ApplyPod(MakePod("a", 4, "quad", "0,1,2,3"));
  Pipeline pipeline(&model);
  for (int i = 0; i < 10; ++i) pipeline.workload().Observe(Pod("w" + std::to_string(i), 8, 8, 64));
  const cluster::PodRequest pod = Pod("p", 4, 8, 64);
  auto evals = pipeline.Evaluate(pod, std::vector<std::string_view>{"quad", "pcie"});
  CHECK(evals[0].score == 10);
  CHECK(evals[1].score < 10);
  // At the default rate (4) the slower set's price is 4 x 4 x (1 - x) GPUs; its whole cost is above quad's.
  REQUIRE(evals[1].trade.has_value());
  CHECK(evals[1].trade->interconnect_gpus > 10);
  CHECK(evals[0].trade->interconnect_gpus == 0);
  CHECK(evals[1].trade->fragmentation_gpus + evals[1].trade->interconnect_gpus >
        evals[0].trade->fragmentation_gpus + evals[0].trade->interconnect_gpus);
  // With R = .inf (the lexicographic rule) a slower set gets nothing from FragmentationGradient.
  PipelineConfig lexicographic;
  lexicographic.interconnect_rate = std::numeric_limits<double>::infinity();
  Pipeline lex(&model, lexicographic);
  for (int i = 0; i < 10; ++i) lex.workload().Observe(Pod("w" + std::to_string(i), 8, 8, 64));
  auto l = lex.Evaluate(pod, std::vector<std::string_view>{"quad", "pcie"});
  CHECK(l[0].score == 10);
  CHECK(l[1].parts[1].value == 0.0);
}

TEST_CASE("fragmentation gradient: the formula, by hand, and relative levels") {
  cluster::ClusterModel model;
  AddNode(model, "a", 4, "pcie-4-single-socket", 64, 256, "T4");
  AddNode(model, "b", 4, "pcie-4-single-socket", 64, 256, "T4");
  model.ApplyPod(MakePod("x", 2, "a", "0,1"));  // a: 2 free; b: 4 free.
  Pipeline pipeline(&model);
  pipeline.workload().Observe(Pod("w1", 2, 8, 32));
  pipeline.workload().Observe(Pod("w2", 4, 8, 32));
  const cluster::PodRequest pod = Pod("p", 2, 8, 32);
  // Evaluate counts the pod as prioritize would: shares 2/3 for 2 GPUs (w1, p), 1/3 for 4 GPUs (decay
  // over two pods is 2^(1/2000) per pod, negligible: Approx).
  // a: before 2 free: 2-GPU fits, 4-GPU loses 2 -> frag 2/3; after 0 free -> 0. delta -2/3.
  // b: before 4 free -> 0; after 2 free: 4-GPU loses 2 -> 2/3. delta +2/3. Same ring on both (price 0);
  // G = 4 and R k = 4 x 2 (the default rate): s = 0.5 -+ (2/3) / (2 (4 + 8)) = 0.5 -+ 1/36.
  auto evals = pipeline.Evaluate(pod, std::vector<std::string_view>{"a", "b"});
  REQUIRE(evals[0].parts.size() == 2);
  CHECK(evals[0].parts[1].value == doctest::Approx(0.5 + 1.0 / 36).epsilon(1e-3));
  CHECK(evals[1].parts[1].value == doctest::Approx(0.5 - 1.0 / 36).epsilon(1e-3));
  CHECK(evals[0].score == 10);
  CHECK(evals[1].score == 0);  // The lowest of a relative scale.
  PipelineConfig absolute;
  absolute.relative_levels = false;
  Pipeline abs(&model, absolute);
  abs.workload().Observe(Pod("w1", 2, 8, 32));
  abs.workload().Observe(Pod("w2", 4, 8, 32));
  auto a = abs.Evaluate(pod, std::vector<std::string_view>{"a", "b"});
  CHECK(a[0].score == 8);  // round(10 * (1 + 7/12) / 2) = round(7.92)
  CHECK(a[1].score == 7);  // round(10 * (1 + 5/12) / 2) = round(7.08)
}

TEST_CASE("fragmentation gradient: with no pod seen yet the pod itself is the workload") {
  cluster::ClusterModel model;
  AddNode(model, "a", 2, "phb-2-workstation", 32, 128, "T4");
  Pipeline pipeline(&model);
  auto evals = pipeline.Evaluate(Pod("p", 1, 4, 16), std::vector<std::string_view>{"a"});
  REQUIRE(evals[0].parts.size() == 2);
  CHECK(evals[0].parts[1].value == doctest::Approx(0.5));  // 2 free -> 1 free, both usable: delta 0.
  CHECK(pipeline.workload().Snapshot()->observed == 0);   // Evaluate (explain) observes nothing.
}

}  // namespace
}  // namespace topofit::placement

namespace topofit::placement {
namespace {

TEST_CASE("fragmentation gradient: with podsWithoutGpus a CPU-only pod keeps the CPU an 8-GPU pod needs") {
  cluster::ClusterModel model;
  AddNode(model, "big", 8, "pcie-8-dual-socket", 128, 1024, "G3");
  AddNode(model, "small", 8, "pcie-8-dual-socket", 64, 1024, "G3");
  const std::vector<std::string> names{"big", "small"};
  PipelineConfig config;
  config.score_pods_without_gpus = true;
  Pipeline pipeline(&model, config);
  for (int i = 0; i < 4; ++i) pipeline.workload().Observe(Pod("eight" + std::to_string(i), 8, 100, 256));
  // 40 cores on big leave 88 < 100: its 8 free GPUs are lost to the 8-GPU pods; small never had them.
  const cluster::PodRequest cpu = Pod("cpu", 0, 40, 64);
  auto s = Scores(pipeline, cpu, names);
  CHECK(s["small"] == 10);
  CHECK(s["big"] < 10);
  CHECK(pipeline.workload().Snapshot()->observed == 4);  // Pods without GPUs are not part of it.
  // Off (the default): neutral 0 everywhere, as kube-scheduler expects of a GPU extender.
  Pipeline off(&model);
  auto o = Scores(off, cpu, names);
  CHECK(o["big"] == 0);
  CHECK(o["small"] == 0);
  // Explain shows the pod as the prioritize-pods-without-gpus entry scores it, whatever the config.
  Explanation e = Explain(off, cpu, names);
  REQUIRE(e.nodes.size() == 2);
  CHECK(e.chosen == "small");
  CHECK(e.nodes[0].node == "small");
  CHECK(e.nodes[0].score == 10);
  CHECK(e.nodes[1].score < 10);
  REQUIRE(e.nodes[0].parts.size() == 2);
  CHECK(e.nodes[0].parts[1].plugin == "FragmentationGradient");
  CHECK(e.nodes[0].set.has_value());
  CHECK(e.nodes[0].set->size() == 0);
}

}  // namespace
}  // namespace topofit::placement
