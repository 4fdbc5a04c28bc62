#include "bench/run_metrics.h"

#include <algorithm>
#include <chrono>

namespace topofit::bench {

RecordingReplayer::RecordingReplayer(SimCluster* cluster, Policy* policy, RunMetrics* out)
    : cluster_(cluster), policy_(policy), out_(out) {
  out_->policy = policy->name();
  out_->capacity = cluster->gpu_capacity();
}

uint32_t RecordingReplayer::BestRingAnywhere(const PodSpec& pod, const std::vector<int>& feasible) {
  uint32_t best = 0;
  for (int i : feasible) {
    const SimNode& n = cluster_->node(i);
    if (n.type < 0) continue;
    uint64_t key = (n.free.mask() * 64 + uint64_t(n.type)) * 65 + uint64_t(pod.gpus);
    auto it = best_ring_memo_.find(key);
    if (it == best_ring_memo_.end()) {
      const auto& sel = cluster_->type_of(i).topology->selector();
      it = best_ring_memo_.emplace(key, sel.BestRingMbps(n.free, pod.gpus)).first;
    }
    best = std::max(best, it->second);
  }
  return best;
}

Placement RecordingReplayer::Arrive(const PodSpec& pod) {
  ++out_->arrivals;
  auto t0 = std::chrono::steady_clock::now();
  cluster_->Feasible(pod, &feasible_);
  cluster_->NodesFound(feasible_, &found_);
  Placement p;
  if (!found_.empty()) p = policy_->Place(*cluster_, pod, found_);
  auto t1 = std::chrono::steady_clock::now();
  out_->decision_us.push_back(float(std::chrono::duration<double, std::micro>(t1 - t0).count()));
  if (!p.ok()) {
    ++out_->failed_pods;
    if (pod.gpus > 0) ++out_->failed_gpu_pods;
    return p;
  }
  if (pod.gpus > 1) {
    // Measured before binding: the best the cluster offered when the decision was made.
    uint32_t best = BestRingAnywhere(pod, feasible_);
    const auto& sel = cluster_->type_of(p.node).topology->selector();
    out_->multi.push_back({pod.gpus, sel.RingMbps(p.gpus) / 1000.0, best / 1000.0});
  }
  cluster_->Bind(p.node, pod, p.gpus);
  policy_->Bound(*cluster_, pod, p);
  return p;
}

void RecordingReplayer::Depart(const PodSpec& pod, const Placement& placement) {
  if (!placement.ok()) return;
  cluster_->Release(placement.node, pod, placement.gpus);
  policy_->Released(*cluster_, pod, placement);
}

}  // namespace topofit::bench
