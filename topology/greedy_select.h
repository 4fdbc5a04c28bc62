#pragma once
// GreedySets: heuristic GPU-set search for nodes of 17..64 GPUs, where the exact per-subset tables
// of RingTables (2^n entries) are out of reach. NOT exact; documented, deterministic, never fails.
//
// Candidates(pool, k): for every seed GPU of `pool` (increasing index) grow a set one GPU at a time,
// always adding the pool GPU with (1) the highest bandwidth to any member (it can be spliced into
// the ring next to that member), then (2) the highest total bandwidth to all members (compact
// sets), then (3) the lowest index; with a min-link class, only GPUs at least that class to every
// member are eligible. Distinct k-sets, in the order first grown, are the candidates.
// Ring(set): exact bottleneck ring (Held-Karp) for sets of up to kExactRing GPUs; above that the
// best of the greedy "next hop = fastest unvisited neighbour" rings started from every member - a
// lower bound of the true best ring.
// BestRing(within, s): the best Ring over Candidates(within, s); a lower bound of the true value.
//
// Thread-safety: immutable after construction except the per-size whole-node cache, which is
// guarded by std::call_once. Holds a pointer to `pairs`, which must outlive it.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "topology/gpu_set.h"
#include "topology/link_class.h"
#include "topology/pair_matrix.h"

namespace topofit {

class GreedySets {
 public:
  static constexpr int kExactRing = 10;

  explicit GreedySets(const PairMatrix* pairs);
  GreedySets(const GreedySets&) = delete;
  GreedySets& operator=(const GreedySets&) = delete;

  std::vector<GpuSet> Candidates(GpuSet pool, int k, std::optional<LinkClass> min_link) const;
  uint32_t Ring(GpuSet set) const;
  uint32_t BestRing(GpuSet within, int s) const;
  // BestRing over the whole node, computed once per size.
  uint32_t BestWhole(int s) const;
  bool MeetsMinLink(GpuSet set, LinkClass min_link) const;

 private:
  GpuSet Grow(int seed, GpuSet pool, int k, std::optional<LinkClass> min_link) const;
  uint32_t NearestNeighbourRing(const std::vector<int>& members) const;

  const PairMatrix* pairs_;
  // at_least_[c][i]: GPUs j != i whose link to i is at least class c (Self never counts).
  std::vector<std::vector<uint64_t>> at_least_;
  mutable std::unique_ptr<std::once_flag[]> whole_once_;
  mutable std::vector<uint32_t> whole_;
};

}  // namespace topofit
