// The Stranding score: free GPUs must keep CPU and memory beside them. Values worked out by hand from
// the formula in score_plugins.h, on 8-GPU nodes with 96 cores and 384 GiB (12 cores, 48 GiB per GPU).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "extender/placement/pipeline.h"
#include "extender/placement/testing/placement_fixture.h"

namespace topofit::placement {
namespace {

using namespace testing;

// A bound pod without GPUs taking CPU and memory on `node`.
void AddCpuPod(cluster::ClusterModel& model, const std::string& uid, const std::string& node, int64_t cores, int64_t mem_gib) {
  auto p = MakePod(uid, 0, node);
  p.cpu_milli = cores * 1000;
  p.memory_bytes = mem_gib * kGiB;
  model.ApplyPod(p);
}

cluster::PodRequest Pod(int gpus, int64_t cores, int64_t mem_gib) {
  cluster::PodRequest r = Request("p", gpus);
  r.cpu_milli = cores * 1000;
  r.memory_bytes = mem_gib * kGiB;
  return r;
}

// The Stranding value s of each node, in the order given.
std::vector<double> Stranding(cluster::ClusterModel& model, const cluster::PodRequest& pod, std::vector<std::string_view> names) {
  PipelineConfig only;
  only.weights = {{"Stranding", 1.0}};
  REQUIRE(Pipeline::Validate(only).ok());
  Pipeline pipeline(&model, only);
  std::vector<double> out;
  for (const NodeEvaluation& e : pipeline.Evaluate(pod, names)) {
    REQUIRE(e.status.passed());
    REQUIRE(e.parts.size() == 1);
    CHECK(e.parts[0].plugin == "Stranding");
    out.push_back(e.parts[0].value);
  }
  return out;
}

TEST_CASE("stranding: a frugal pod goes to the GPUs that sit beside used-up CPU") {
  cluster::ClusterModel model;
  AddNode(model, "starved", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "fresh", 8, "pcie-8-dual-socket", 96, 384);
  AddCpuPod(model, "cpu", "starved", 84, 0);  // 12 cores left: 1 of its 8 free GPUs is backed.
  // 4 cores: starved backs 1 -> (12-4)/12 = 2/3, waste 1 - 2/3 - 1 = -2/3, s = 0.5 + 1/3.
  // fresh backs 8 -> 7 (GPU-bound both times), waste 0, s = 0.5.
  auto s = Stranding(model, Pod(1, 4, 16), {"starved", "fresh"});
  CHECK(s[0] == doctest::Approx(0.5 + 1.0 / 3));
  CHECK(s[1] == doctest::Approx(0.5));
  // No CPU at all: the starved node's backed GPU stays backed, waste -1, s = 1.
  s = Stranding(model, Pod(1, 0, 0), {"starved", "fresh"});
  CHECK(s[0] == doctest::Approx(1.0));
  CHECK(s[1] == doctest::Approx(0.5));
}

TEST_CASE("stranding: a CPU-hungry pod is kept off nodes it would strand and sent where CPU is plentiful") {
  cluster::ClusterModel model;
  AddNode(model, "g8", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "cpu-rich", 2, "phb-2-workstation", 104, 512);  // 52 cores per GPU.
  // 36 cores on g8: backed 8 -> min(7, 60/12) = 5, waste 2, s = 0.5 - 2/2 -> 0.
  // On cpu-rich: 2 -> min(1, 68/52) = 1, waste 0, s = 0.5.
  auto s = Stranding(model, Pod(1, 36, 16), {"g8", "cpu-rich"});
  CHECK(s[0] == doctest::Approx(0.0));
  CHECK(s[1] == doctest::Approx(0.5));
  // Memory counts the same way: 96 GiB on g8 is 2 GPUs' share: backed 8 -> min(7, 288/48) = 6,
  // waste 1, s = 0.5 - 1/2 = 0.
  s = Stranding(model, Pod(1, 1, 96), {"g8"});
  CHECK(s[0] == doctest::Approx(0.0));
  // A 2-GPU pod with 36 cores: backed 8 -> min(6, 60/12) = 5, waste 1, s = 0.5 - 1/4.
  s = Stranding(model, Pod(2, 36, 16), {"g8"});
  CHECK(s[0] == doctest::Approx(0.25));
}

TEST_CASE("stranding: weighted beside the other parts, the node score follows it") {
  cluster::ClusterModel model;
  AddNode(model, "starved", 8, "pcie-8-dual-socket", 96, 384);
  AddNode(model, "fresh", 8, "pcie-8-dual-socket", 96, 384);
  AddCpuPod(model, "cpu", "starved", 84, 0);
  PipelineConfig config;  // The weights Stranding was designed beside (no longer the default).
  config.weights = {{"SetQuality", 2.0}, {"Packing", 1.0}, {"Fragmentation", 1.0}, {"Stranding", 2.0}};
  config.relative_levels = false;
  Pipeline pipeline(&model, config);
  std::vector<std::string> names{"starved", "fresh"};
  auto scores = pipeline.Prioritize(Pod(1, 4, 16), names);
  REQUIRE(scores.size() == 2);
  // Same GPUs free on both, so SetQuality, Packing and Fragmentation tie; Stranding decides.
  CHECK(scores[0].score > scores[1].score);
}

TEST_CASE("stranding: nodes without allocatable CPU or memory figures are neutral") {
  cluster::ClusterModel model;
  model.ApplyNode(cluster::testing::MakeNode("bare", 8, "pcie-8-dual-socket"));  // No cpu/memory in allocatable.
  auto s = Stranding(model, Pod(1, 36, 96), {"bare"});
  CHECK(s[0] == doctest::Approx(0.5));
}

}  // namespace
}  // namespace topofit::placement
