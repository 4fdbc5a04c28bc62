// NodeClasses and the per-state evaluation it enables: nodes in the same state share a class whatever
// their names, any difference a plugin may read splits them, and the memoised Filter and Prioritize
// answer exactly what evaluating every node on its own (Evaluate) answers.
#include "extender/placement/node_classes.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement {
namespace {

using cluster::testing::kGiB;
using cluster::testing::MakePod;
using cluster::testing::Request;

void AddNode(cluster::ClusterModel& model, const std::string& name, const std::string& topology, int64_t cores = 96) {
  model.ApplyNode(cluster::testing::MakeNodeWithResources(name, 8, topology, cores, 384));
}

void AddPod(cluster::ClusterModel& model, const std::string& uid, const std::string& node, int gpus, const std::string& ids,
            int64_t cores) {
  auto p = MakePod(uid, gpus, node, ids);
  p.cpu_milli = cores * 1000;
  p.memory_bytes = cores * 4 * kGiB;
  model.ApplyPod(p);
}

std::vector<uint32_t> Classes(cluster::ClusterModel& model, const std::vector<std::string>& names, size_t hint) {
  NodeClasses classes(hint);
  std::vector<uint32_t> out;
  auto reader = model.Read();
  for (const auto& name : names) {
    const cluster::NodeState* n = reader.Find(name);
    REQUIRE(n != nullptr);
    out.push_back(classes.Classify(NodeView{name, n, n->free()}));
  }
  CHECK(classes.size() == *std::max_element(out.begin(), out.end()) + 1);
  return out;
}

// The ResourceKey of each node, in the order given.
std::vector<ResourceKey> Resources(cluster::ClusterModel& model, const std::vector<std::string>& names) {
  std::vector<ResourceKey> out;
  auto reader = model.Read();
  for (const auto& name : names) out.push_back(ResourceKey::Of(*reader.Find(name)));
  return out;
}

TEST_CASE("node classes: same state, same class, any readable difference, another class") {
  cluster::ClusterModel model;
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) AddNode(model, n, "hgx-a100-8");
  AddNode(model, "pcie", "pcie-8-dual-socket");
  AddNode(model, "small", "hgx-a100-8", /*cores=*/48);
  AddPod(model, "c1", "c", 2, "0,1", 8);  // c: GPUs 0,1 and 8 cores used.
  AddPod(model, "d1", "d", 2, "0,1", 8);  // d: same as c.
  AddPod(model, "e1", "e", 2, "2,3", 8);  // e: other GPUs.
  AddPod(model, "f1", "f", 2, "0,1", 16); // f: GPUs as c, more CPU.
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f", "pcie", "small"};

  auto gpu = Classes(model, names, names.size());
  auto res = Resources(model, names);
  CHECK(gpu[0] == gpu[1]);  // Empty twins, names aside...
  CHECK(res[0] == res[1]);
  CHECK(gpu[2] == gpu[3]);  // ...and twins in use.
  CHECK(res[2] == res[3]);
  CHECK(gpu[2] != gpu[0]);
  CHECK(gpu[4] != gpu[2]);  // Free mask.
  CHECK(gpu[6] != gpu[0]);  // Topology.
  // CPU and memory are not part of the GPU state, but the ResourceKey tells them apart.
  CHECK(gpu[5] == gpu[2]);
  CHECK(res[5] != res[2]);  // Used CPU and memory.
  CHECK(gpu[7] == gpu[0]);
  CHECK(res[7] != res[0]);  // Allocatable CPU.
}

TEST_CASE("node classes: more distinct states than the size hint") {
  cluster::ClusterModel model;
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    // Every node a GPU state of its own: free masks 0..255 on one topology, then on another.
    names.push_back("n" + std::to_string(i));
    AddNode(model, names.back(), i < 256 ? "hgx-a100-8" : "dgx1-v100");
    std::string ids;
    for (int g = 0; g < 8; ++g)
      if ((i % 256) >> g & 1) ids += (ids.empty() ? "" : ",") + std::to_string(g);
    if (!ids.empty()) AddPod(model, "p" + std::to_string(i), names.back(), std::popcount(unsigned(i % 256)), ids, 0);
  }
  auto classes = Classes(model, names, /*hint=*/1);
  for (size_t i = 0; i < classes.size(); ++i) CHECK(classes[i] == i);
}

// A cluster where some nodes share states and many do not: random GPUs and CPU taken.
std::vector<std::string> MixedCluster(cluster::ClusterModel& model, int nodes, unsigned seed) {
  std::mt19937 rng(seed);
  const char* profiles[] = {"dgx1-v100", "hgx-a100-8", "pcie-8-dual-socket"};
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) {
    names.push_back("node-" + std::to_string(i));
    AddNode(model, names.back(), profiles[i % 3]);
    if (i % 4 == 0) continue;  // A quarter stays empty: many twins.
    std::string ids;
    int gpus = 0;
    for (int g = 0; g < 8; ++g) {
      if (rng() % 2) continue;
      ids += (ids.empty() ? "" : ",") + std::to_string(g);
      ++gpus;
    }
    if (gpus > 0) AddPod(model, "p" + std::to_string(i), names.back(), gpus, ids, int64_t(rng() % 3) * 8);
  }
  names.push_back("ghost");  // Unknown to the model.
  return names;
}

TEST_CASE("pipeline: memoised filter and prioritize agree with evaluating every node alone") {
  cluster::ClusterModel model;
  const auto names = MixedCluster(model, 240, 7);
  std::vector<std::string_view> views(names.begin(), names.end());
  // Default weights (GPU-only plugins and Stranding), GPU-only plugins alone, Stranding alone.
  PipelineConfig gpu_only, resources_only;
  gpu_only.weights = {{"SetQuality", 2.0}, {"Packing", 1.0}, {"Fragmentation", 1.0}};
  resources_only.weights = {{"Stranding", 1.0}};
  for (const PipelineConfig& config : {PipelineConfig{}, gpu_only, resources_only}) {
  CAPTURE(config.weights.size());
  Pipeline pipeline(&model, config);
  for (const cluster::PodRequest& pod : {Request("one", 1), Request("two", 2), Request("four", 4), Request("eight", 8),
                                Request("req", 4, cluster::testing::Required("NV"))}) {
    CAPTURE(pod.uid);
    const auto evals = pipeline.Evaluate(pod, views);
    const auto scores = pipeline.Prioritize(pod, views);
    const FilterOutcome filter = pipeline.Filter(pod, views);
    REQUIRE(scores.size() == views.size());
    std::vector<FilterStatus> verdict(views.size());
    for (uint32_t i : filter.passed) verdict[i] = FilterStatus::Pass();
    for (const auto& f : filter.failed) verdict[f.index] = FilterStatus::Fail(f.reason);
    for (const auto& f : filter.unresolvable) verdict[f.index] = FilterStatus::Unresolvable(f.reason);
    CHECK(filter.passed.size() + filter.failed.size() + filter.unresolvable.size() == views.size());
    int passing = 0, distinct_scores = 0;
    std::vector<bool> seen(11);
    for (size_t i = 0; i < views.size(); ++i) {
      CAPTURE(names[i]);
      CHECK(scores[i].index == i);
      CHECK(scores[i].score == evals[i].score);
      CHECK(verdict[i].code == evals[i].status.code);
      CHECK(verdict[i].reason == evals[i].status.reason);
      passing += evals[i].status.passed();
      if (!seen[scores[i].score]) seen[scores[i].score] = true, ++distinct_scores;
    }
    CHECK(passing > 0);            // The comparison covered scored nodes...
    CHECK(distinct_scores >= 2);   // ...that the scores tell apart.
  }
  }
}

}  // namespace
}  // namespace topofit::placement
