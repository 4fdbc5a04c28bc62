#include "extender/bench/scored_policy.h"

namespace topofit::bench {

Status ScoredPolicy::Reset(const SimCluster& cluster, uint64_t seed) {
  rng_.seed(seed);
  if (allocators_.size() != cluster.types().size()) {
    allocators_.clear();
    for (const auto& t : cluster.types()) allocators_.push_back(std::make_unique<DevicePluginAllocator>(*t.topology));
  }
  return Status::Ok();
}

Placement ScoredPolicy::Place(const SimCluster& cluster, const PodSpec& pod, std::span<const int> feasible) {
  int best = -1;
  int64_t best_score = 0;
  int ties = 0;
  for (int i : feasible) {
    int64_t s = Score(cluster, cluster.node(i), pod);
    if (best < 0 || s > best_score) {
      best = i;
      best_score = s;
      ties = 1;
    } else if (s == best_score) {
      // kube-scheduler selectHost: each of the `ties` equal nodes ends up chosen with probability 1/ties.
      ++ties;
      if (std::uniform_int_distribution<int>(0, ties - 1)(rng_) == 0) best = i;
    }
  }
  Placement p;
  if (best < 0) return p;
  p.node = best;
  if (pod.gpus > 0) {
    const SimNode& n = cluster.node(best);
    auto set = allocators_[n.type]->Allocate(n.free, pod.gpus);
    if (!set) return Placement{};
    p.gpus = *set;
  }
  return p;
}

}  // namespace topofit::bench
