#include "bench/run_metrics.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "bench/shared_metrics.h"

namespace topofit::bench {

namespace {

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in microseconds.
double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

}  // namespace

RecordingReplayer::RecordingReplayer(SimCluster* cluster, Policy* policy, RunMetrics* out)
    : cluster_(cluster), policy_(policy), out_(out) {
  out_->policy = policy->name();
  out_->capacity = cluster->gpu_capacity();
  out_->shared_cluster = HasSharedNodes(*cluster);
}

uint32_t RecordingReplayer::BestRingOn(const PodSpec& pod, int i) {
  const SimNode& n = cluster_->node(i);
  if (n.type < 0) return 0;
  uint64_t key = (n.free.mask() * 64 + uint64_t(n.type)) * 65 + uint64_t(pod.gpus);
  auto it = best_ring_memo_.find(key);
  if (it == best_ring_memo_.end()) {
    const auto& sel = cluster_->type_of(i).topology->selector();
    it = best_ring_memo_.emplace(key, sel.BestRingMbps(n.free, pod.gpus)).first;
  }
  return it->second;
}

uint32_t RecordingReplayer::BestRingAnywhere(const PodSpec& pod, const std::vector<int>& feasible) {
  uint32_t best = 0;
  for (int i : feasible) best = std::max(best, BestRingOn(pod, i));
  return best;
}

Placement RecordingReplayer::Arrive(const PodSpec& pod) {
  ++out_->arrivals;
  const double c0 = ThreadCpuUs();
  auto t0 = std::chrono::steady_clock::now();
  cluster_->Feasible(pod, &feasible_);
  cluster_->NodesFound(feasible_, &found_);
  Placement p;
  if (!found_.empty()) p = policy_->Place(*cluster_, pod, found_);
  auto t1 = std::chrono::steady_clock::now();
  const double c1 = ThreadCpuUs();
  const float wall = float(std::chrono::duration<double, std::micro>(t1 - t0).count());
  out_->decision_us.push_back(wall);
  out_->decision_cpu_us.push_back(float(c1 - c0));
  if (pod.gpus <= 0) {
    out_->no_gpu_decision_us.push_back(wall);
    out_->no_gpu_decision_cpu_us.push_back(float(c1 - c0));
  }
  if (!p.ok()) {
    ++out_->failed_pods;
    if (pod.gpus > 0) ++out_->failed_gpu_pods;
    return p;
  }
  if (pod.gpus > 1) {
    // Measured before binding: the best the cluster offered when the decision was made.
    uint32_t best = BestRingAnywhere(pod, feasible_);
    const NodeType& type = cluster_->type_of(p.node);
    const int extra = ExtraReplicas(type.shared, p.gpus);
    out_->multi.push_back({pod.gpus, type.topology->selector().RingMbps(p.gpus) / 1000.0, best / 1000.0,
                           BestRingOn(pod, p.node) / 1000.0, uint8_t(KindOf(type.shared)), pod.packed, extra});
    if (extra > 0 && !pod.packed) ++out_->doubled_pods;
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
