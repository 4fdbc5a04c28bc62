// CPU and memory in the model, and score plugins registered from outside the built-in list.
#include <doctest/doctest.h>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/pipeline.h"
#include "extender/placement/score_plugins.h"

namespace topofit::placement {
namespace {

using cluster::testing::MakeNode;
using cluster::testing::MakePod;
using cluster::testing::Request;

// Prefers nodes with more free CPU (a stand-in for a resource-aware plugin).
class FreeCpuScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "TestFreeCpu"; }
  double Score(const CycleState&, const NodeView& node, const PlacerChoice&) const override {
    const int64_t cap = node.node->allocatable().cpu_milli;
    return cap > 0 ? std::clamp(double(node.free_cpu_milli()) / cap, 0.0, 1.0) : 0.0;
  }
};

TEST_CASE("resources: bound pods' CPU and memory are summed per node - GPU-less pods included") {
  cluster::ClusterModel model;
  auto node = MakeNode("n", 4, "pcie-4-single-socket");
  node.allocatable_cpu_milli = 16000;
  node.allocatable_memory_bytes = 64ll << 30;
  model.ApplyNode(node);
  auto gpu = MakePod("g", 1, "n", "0");
  gpu.cpu_milli = 4000;
  gpu.memory_bytes = 8ll << 30;
  auto cpu_only = MakePod("c", 0, "n");
  cpu_only.cpu_milli = 2000;
  cpu_only.memory_bytes = 1ll << 30;
  model.ApplyPod(gpu);
  model.ApplyPod(cpu_only);
  {
    auto reader = model.Read();
    const cluster::NodeState* n = reader.Find("n");
    NodeView view{"n", n, n->free()};
    CHECK(view.free_cpu_milli() == 10000);
    CHECK(view.free_memory_bytes() == (64ll << 30) - (9ll << 30));
  }
  auto info = model.Node("n");
  CHECK(info->pods.size() == 1);  // GPU views list GPU holders only.
  CHECK(info->free.size() == 3);
  model.DeletePod("c");
  auto reader = model.Read();
  CHECK(reader.Find("n")->used_cpu_milli() == 4000);
}

TEST_CASE("resources: reservations count the pod's CPU and memory") {
  cluster::ClusterModel model;
  Pipeline pipeline(&model);
  auto node = MakeNode("n", 4, "pcie-4-single-socket");
  node.allocatable_cpu_milli = 8000;
  model.ApplyNode(node);
  cluster::PodRequest pod = Request("p", 2);
  pod.cpu_milli = 3000;
  REQUIRE(pipeline.ReserveBest(pod, "n").ok());
  CHECK(model.Read().Find("n")->used_cpu_milli() == 3000);
  REQUIRE(pipeline.Release("p").ok());
  CHECK(model.Read().Find("n")->used_cpu_milli() == 0);
}

TEST_CASE("resources: a score plugin given to the pipeline is enabled by its weight") {
  auto plugins = AllScorePlugins();
  plugins.push_back(std::make_unique<FreeCpuScore>());
  PipelineConfig config;
  config.weights = {{"TestFreeCpu", 1.0}};
  config.relative_levels = false;  // The plugin's own value, rounded: round(10 * s).
  CHECK(Pipeline::Validate(config, plugins).ok());
  cluster::ClusterModel model;
  Pipeline pipeline(&model, config, std::move(plugins));
  for (const char* name : {"busy", "idle"}) {
    auto node = MakeNode(name, 4, "pcie-4-single-socket");
    node.allocatable_cpu_milli = 10000;
    model.ApplyNode(node);
  }
  auto hog = MakePod("hog", 0, "busy");
  hog.cpu_milli = 8000;
  model.ApplyPod(hog);
  std::vector<std::string> names{"busy", "idle"};
  auto scores = pipeline.Prioritize(Request("p", 1), names);
  CHECK(scores[0].score == 2);
  CHECK(scores[1].score == 10);
  // The default pipeline does not run it: only the built-ins with a default weight.
  Pipeline defaults(&model);
  auto evals = defaults.Evaluate(Request("p", 1), std::vector<std::string_view>{"idle"});
  CHECK(evals[0].parts.size() == PipelineConfig::DefaultWeights().size());
  for (const auto& part : evals[0].parts) CHECK(part.plugin != "TestFreeCpu");
}

}  // namespace
}  // namespace topofit::placement
