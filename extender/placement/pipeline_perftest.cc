// Pipeline microbenchmarks: the model-side work of one 5,000-node filter or prioritize call, without
// HTTP or JSON - node lookups alone, then Filter and Prioritize on an idle cluster (most nodes in
// one of three states: every node's verdict and score memoised) and on a busy one (random GPUs and
// CPU taken: nearly every node a state of its own, the worst case for NodeClasses).
// Run: build/extender/placement/pipeline_perftest --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
// and read the medians (this machine is shared and noisy).

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "extender/k8s/testing/busy_cluster.h"
#include "extender/cluster/cluster_model.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement {
namespace {

constexpr int kNodes = 5000;
constexpr int64_t kGiB = int64_t(1) << 30;

struct Cluster {
  cluster::ClusterModel model;
  std::vector<std::string> names;
  std::string arena;  // The names back to back, as the server decodes a request's NodeNames.
  std::vector<std::string_view> views;
};

// Three hardware profiles as extender_loadgen uses, its names; busy: k8s::testing::BusyPods.
std::unique_ptr<Cluster> MakeCluster(bool busy) {
  auto c = std::make_unique<Cluster>();
  const char* profiles[] = {"dgx1-v100", "hgx-a100-8", "pcie-8-dual-socket"};
  const char* products[] = {"Tesla-V100-SXM2-32GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S"};
  for (int i = 0; i < kNodes; ++i) {
    k8s::NodeObject n;
    n.meta.name = k8s::testing::Ec2NodeName(i);
    n.meta.uid = "uid-" + n.meta.name;
    n.allocatable_gpus = n.capacity_gpus = 8;
    n.allocatable_cpu_milli = 95690;
    n.allocatable_memory_bytes = 1100 * kGiB;
    n.meta.annotations[k8s::kTopologyAnnotation] = profiles[i % 3];
    n.meta.labels[k8s::kGfdProductLabel] = products[i % 3];
    c->model.ApplyNode(n);
    c->names.push_back(n.meta.name);
  }
  if (busy)
    for (const auto& p : k8s::testing::BusyPods(c->names)) c->model.ApplyPod(p);
  for (const auto& n : c->names) c->arena += n;
  for (size_t at = 0; const auto& n : c->names) {
    c->views.emplace_back(c->arena.data() + at, n.size());
    at += n.size();
  }
  return c;
}

Cluster& Idle() {
  static auto c = MakeCluster(false);
  return *c;
}
Cluster& Busy() {
  static auto c = MakeCluster(true);
  return *c;
}

cluster::PodRequest TwoGpuPod() {
  k8s::PodObject p;
  p.meta.uid = "bench-pod";
  p.meta.name = "bench-pod";
  p.gpus = 2;
  p.cpu_milli = 8000;
  p.memory_bytes = 64 * kGiB;
  return cluster::MakePodRequest(p);
}

void BM_FindEach(benchmark::State& state) {
  Cluster& c = Idle();
  for (auto _ : state) {
    size_t found = 0;
    c.model.Read().FindEach(c.views, [&](uint32_t, const cluster::NodeState* n) { found += n != nullptr; });
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_FindEach)->Unit(benchmark::kMicrosecond);

// range(0): 0 idle, 1 busy.
template <auto Verb>
void BM_Verb(benchmark::State& state) {
  Cluster& c = state.range(0) ? Busy() : Idle();
  Pipeline pipeline(&c.model);
  const cluster::PodRequest pod = TwoGpuPod();
  for (auto _ : state) benchmark::DoNotOptimize((pipeline.*Verb)(pod, c.views));
  state.SetLabel(state.range(0) ? "busy" : "idle");
  state.SetItemsProcessed(state.iterations() * kNodes);
}
using Views = std::span<const std::string_view>;
constexpr FilterOutcome (Pipeline::*kFilter)(const cluster::PodRequest&, Views) const = &Pipeline::Filter;
constexpr std::vector<NodeScore> (Pipeline::*kPrioritize)(const cluster::PodRequest&, Views) const = &Pipeline::Prioritize;
BENCHMARK(BM_Verb<kFilter>)->Name("BM_Filter")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Verb<kPrioritize>)->Name("BM_Prioritize")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// A pod without GPUs with `scoring.podsWithoutGpus` (every node scored: FragmentationGradient on its
// CPU and memory, then the tie-break), after a workload estimate of a few GPU shapes.
void BM_PrioritizeNoGpus(benchmark::State& state) {
  Cluster& c = state.range(0) ? Busy() : Idle();
  PipelineConfig config;
  config.score_pods_without_gpus = true;
  Pipeline pipeline(&c.model, config);
  for (int i = 0; i < 64; ++i) {
    cluster::PodRequest w = TwoGpuPod();
    w.uid = "w" + std::to_string(i);
    w.gpus = 1 << (i % 4);
    w.cpu_milli = 4000 * w.gpus;
    pipeline.workload().Observe(w);
  }
  k8s::PodObject p;
  p.meta.uid = "cpu-pod";
  p.meta.name = "cpu-pod";
  p.cpu_milli = 4000;
  p.memory_bytes = 16 * kGiB;
  const cluster::PodRequest pod = cluster::MakePodRequest(p);
  for (auto _ : state) benchmark::DoNotOptimize(pipeline.Prioritize(pod, c.views));
  state.SetLabel(state.range(0) ? "busy" : "idle");
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_PrioritizeNoGpus)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// BM_Prioritize's pod after a workload estimate of 64 pods of 1-8 GPUs; range(1) = 1: a third of them
// may run only on one GPU model, so each cycle also reads the free GPUs by model and weighs the bound
// demand against them (product_shortfall.h). Compare the two at the same range(0).
void BM_PrioritizeWorkload(benchmark::State& state) {
  Cluster& c = state.range(0) ? Busy() : Idle();
  Pipeline pipeline(&c.model);
  for (int i = 0; i < 64; ++i) {
    cluster::PodRequest w = TwoGpuPod();
    w.uid = "w" + std::to_string(i);
    w.gpus = 1 << (i % 4);
    if (state.range(1) && i % 3 == 0) w.gpu_products = {i % 2 ? "NVIDIA-L40S" : "Tesla-V100-SXM2-32GB"};
    pipeline.workload().Observe(w);
  }
  const cluster::PodRequest pod = TwoGpuPod();
  for (auto _ : state) benchmark::DoNotOptimize(pipeline.Prioritize(pod, c.views));
  state.SetLabel(std::string(state.range(0) ? "busy" : "idle") + (state.range(1) ? ", model-bound" : ", any model"));
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_PrioritizeWorkload)->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 1})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace topofit::placement
