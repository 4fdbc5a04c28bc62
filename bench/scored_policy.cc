#include "bench/scored_policy.h"

#include "bench/dra_nodes.h"
#include "bench/device_plugin_replicas.h"
#include "bench/host_selection.h"

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
  int pick = SelectHost(feasible.size(), [&](size_t k) { return Score(cluster, cluster.node(feasible[k]), pod); }, rng_);
  Placement p;
  if (pick < 0) return p;
  const int best = feasible[pick];
  p.node = best;
  if (pod.gpus > 0) {
    const SimNode& n = cluster.node(best);
    // On a DRA node kube-scheduler's allocator picks the GPUs, whatever scored the node; on a node whose
    // GPUs are shared, the plugin's replica choice.
    const cluster::SharedDevices& shared = cluster.types()[n.type].shared;
    auto set = n.dra             ? std::optional<GpuSet>(DraFirstFit(n, pod.gpus))
               : shared.shared() ? DevicePluginSharedChoice(shared, n.all, n.free, pod.gpus, rng_)
                                 : allocators_[n.type]->Allocate(n.free, pod.gpus);
    if (set && set->empty()) return Placement{};
    if (!set) return Placement{};
    p.gpus = *set;
  }
  return p;
}

}  // namespace topofit::bench
