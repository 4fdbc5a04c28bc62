#include "bench/fgd_policy.h"

#include <cmath>

#include "bench/scored_policy.h"
#include "bench/topofit_policy.h"
#include "extender/placement/workload_estimate.h"

namespace topofit::bench {
namespace {

class FgdPolicy final : public ScoredPolicy {
 public:
  explicit FgdPolicy(FgdScope scope) : scope_(scope) {}
  std::string name() const override {
    switch (scope_) {
      case FgdScope::kAllPods: return "fgd";
      case FgdScope::kGpuPodsLeastAllocated: return "fgd-gpu-pods";
      case FgdScope::kGpuPodsMostAllocated: return "fgd-gpu-pods-mostallocated";
    }
    return "fgd";
  }

  Status Reset(const SimCluster& cluster, uint64_t seed) override {
    estimate_.Reset();
    return ScoredPolicy::Reset(cluster, seed);
  }

  Placement Place(const SimCluster& cluster, const PodSpec& pod, std::span<const int> feasible) override {
    cluster::PodRequest req;
    req.uid = pod.name;
    req.gpus = pod.gpus;
    req.cpu_milli = pod.cpu_milli;
    req.memory_bytes = pod.memory_mib << 20;
    req.gpu_products = pod.gpu_models;
    estimate_.Observe(req);
    auto snap = estimate_.Snapshot();
    shapes_.clear();
    for (const auto& s : snap->shapes) {
      PodSpec as_pod;
      as_pod.gpu_models = s.products;
      shapes_.push_back({s.weight, s.gpus, s.cpu_milli, s.memory_bytes >> 20, cluster.AllowedModels(as_pod)});
    }
    return ScoredPolicy::Place(cluster, pod, feasible);
  }

 protected:
  int64_t Score(const SimCluster&, const SimNode& node, const PodSpec& pod) override {
    if (pod.gpus <= 0 && scope_ != FgdScope::kAllPods)
      return InTreeScore(node, pod, scope_ == FgdScope::kGpuPodsMostAllocated);
    const double before = Frag(node, node.free_gpus(), node.free_cpu, node.free_mem);
    const double after =
        Frag(node, node.free_gpus() - pod.gpus, node.free_cpu - pod.cpu_milli, node.free_mem - pod.memory_mib);
    return -std::llround((after - before) * 1e6);
  }

 private:
  struct Shape {
    double weight;
    int gpus;
    int64_t cpu_milli, memory_mib;
    uint64_t models;
  };
  double Frag(const SimNode& node, int free, int64_t cpu, int64_t mem) const {
    if (free <= 0 || node.model_id < 0) return 0;
    double frag = 0;
    for (const Shape& s : shapes_) {
      const bool fits = s.gpus <= free && s.cpu_milli <= cpu && s.memory_mib <= mem && ((s.models >> node.model_id) & 1);
      if (!fits) frag += s.weight * free;
    }
    return frag;
  }

  FgdScope scope_;
  placement::WorkloadEstimate estimate_;
  std::vector<Shape> shapes_;
};

}  // namespace

std::unique_ptr<Policy> MakeFgdPolicy(FgdScope scope) { return std::make_unique<FgdPolicy>(scope); }

}  // namespace topofit::bench
