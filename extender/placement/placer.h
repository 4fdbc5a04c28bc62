#pragma once
// Placer: THE rule for which GPUs a pod gets on a node, shared by filter, score, explain, preempt and
// reserve - so what prioritize scored is what bind grants (and what the bench measures is what
// kube-scheduler gets).
//
// Rule, for k = pod.gpus on a node with free GPUs F (SetSelector objectives, see set_selector.h):
//   required     Best(F, k, min_link = intent.EffectiveMinLink())      (k == 1: no constraint)
//   best-effort  with min-link: Best(F, k, min_link), else Best(F, k); without: Best(F, k)
//   none         Best(F, k)
// The choice (PlacerChoice) also carries FutureScore of F before and after, for the fragmentation score.
//
// Memoised per (topology, F, k, rule): nodes of one machine type in the same state share the answer,
// so prioritize over 5,000 nodes is mostly hash lookups. Bounded (sharded, each shard cleared when
// full). Thread-safe.

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "extender/cluster/pod_intent.h"
#include "topology/gpu_set.h"
#include "topology/set_selector.h"
#include "topology/topology.h"

namespace topofit::placement {

struct PlacerChoice {
  bool found = false;           // False: no set satisfies the rule (or fewer than k free).
  GpuSet gpus;
  uint32_t ring_mbps = 0;       // Predicted ring all-reduce bandwidth of `gpus` (0 for k == 1).
  bool meets_min_link = true;   // Every pair of `gpus` reaches the pod's effective min-link.
  uint64_t future_before = 0;   // SetSelector::FutureScore(F)
  uint64_t future_after = 0;    // SetSelector::FutureScore(F - gpus)
  double bandwidth_gbps() const { return ring_mbps / 1000.0; }
};

class Placer {
 public:
  explicit Placer(RequestMix mix = {});
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  // The interned Topology must outlive the Placer's use of it (the registry never drops topologies).
  PlacerChoice Choose(const Topology& topology, GpuSet free, int k, const cluster::PodIntent& intent) const;
  // The set kube-scheduler's DRA allocator gives on a DRA node (docs/dra.md): the first k free GPUs of
  // `first_fit` (the allocator's order, ResolvedTopology::first_fit). Not chosen by topology: it is
  // found when k GPUs are free and, for a `required` policy, the set meets the effective min-link
  // (else not found: the allocator would give exactly that set); meets_min_link and the ring say
  // what it is. Not memoised (the order is the node's own).
  PlacerChoice FirstFit(const Topology& topology, GpuSet free, int k, const cluster::PodIntent& intent,
                        const std::vector<int>& first_fit) const;
  // `set`, given by someone else (the allocator's first fit, a DRA claim's prediction), rated as
  // FirstFit rates it: found unless a `required` policy's min-link fails.
  PlacerChoice Rate(const Topology& topology, GpuSet free, GpuSet set, const cluster::PodIntent& intent) const;
  // FutureScore of a whole node, for normalising (memoised too).
  uint64_t FullFuture(const Topology& topology, GpuSet usable) const;
  const RequestMix& mix() const { return mix_; }

 private:
  PlacerChoice Compute(const Topology& topology, GpuSet free, int k, const cluster::PodIntent& intent) const;
  struct Key {
    const Topology* topology;
    uint64_t free;
    uint16_t k;
    uint8_t rule;  // policy * 8 + (min-link class or 7)
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, PlacerChoice, KeyHash> map;
  };
  static constexpr size_t kShards = 16;
  static constexpr size_t kShardLimit = 1 << 14;

  const RequestMix mix_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace topofit::placement
