#pragma once
// SetSelector: chooses the best k GPUs among a node's free GPUs, exactly, for nodes of up to 16 GPUs.
//
// Objective, compared lexicographically (this is the contract the brute-force oracle test checks):
//   1. quality  = predicted ring all-reduce bandwidth of the set: the best Hamiltonian ring through the
//                 set, where a ring is as fast as its slowest hop (PairMatrix::bw, MB/s). NCCL moves
//                 the same bytes over every hop of a ring, so the slowest hop sets the bus bandwidth.
//                 k == 1 has quality 0 for every GPU; k == 2 is the pair's own bandwidth.
//   2. future   = how well the GPUs left free (`free` minus the set) can still serve the request-size
//                 mix, FutureScore(free - set, mix): the sum over mix entries (s, w) of w * ratio(s),
//                 with R = the remaining GPUs, Best(X, s) = best ring of any s-subset of X, and
//                   ratio(s) = 0                                   if s < 1 or s > |R|
//                            = 1'000'000                           if s == 1 (a lone GPU needs no
//                                                                  ring) or Best(node, s) == 0
//                            = 1'000'000 * Best(R, s) / Best(node, s)  otherwise (integer division)
//                 where node = all n GPUs, healthy or not. Entries are summed as listed (a size
//                 listed twice counts twice).
//   3. the set whose sorted index list is lexicographically smallest.
// Constraints: only sets inside `free` (bits >= n are ignored); with min_link set, only sets whose
// every pair is at least that class (NV means any NVLink; a single GPU has no pair and always meets
// it). Nodes of more than 16 GPUs use a greedy search (greedy_select.h): answers are feasible but
// not guaranteed optimal, and ring / best-ring values there are lower bounds.
// Cost (n <= 16): tables of about 1.5 MiB are built in the constructor (n = 16: tens of ms);
// Best() with the default mix is memoised per (free, k, min_link), other mixes are computed each
// time - see set_selector.cc.
//
// Thread-safety: immutable after construction except the query cache, which is internally
// synchronised; Best() may be called from many threads. Owned by the Topology it was built for.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "topology/gpu_set.h"
#include "topology/link_class.h"
#include "topology/pair_matrix.h"

namespace topofit {

// The request sizes the cluster expects, with weights. Default: 1, 2, 4, 8 with weight 1 each.
struct RequestMix {
  struct Entry {
    int size;
    uint32_t weight;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  std::vector<Entry> entries{{1, 1}, {2, 1}, {4, 1}, {8, 1}};
  friend bool operator==(const RequestMix&, const RequestMix&) = default;
};

struct SelectOptions {
  std::optional<LinkClass> min_link;  // Every pair of the chosen set must be at least this class.
  const RequestMix* mix = nullptr;    // nullptr means the selector's default mix.
  bool bypass_cache = false;          // Recompute even if memoised (benchmarks, diagnostics).
};

struct SetChoice {
  GpuSet gpus;
  uint32_t ring_mbps = 0;   // Objective 1.
  uint64_t future = 0;      // Objective 2.
  double bandwidth_gbps() const { return ring_mbps / 1000.0; }
};

class SetSelector {
 public:
  // n <= 16 gives exact answers; larger nodes (up to 64) use a greedy search documented in the .cc.
  explicit SetSelector(PairMatrix pairs, RequestMix default_mix = {});
  ~SetSelector();
  SetSelector(const SetSelector&) = delete;
  SetSelector& operator=(const SetSelector&) = delete;

  int gpu_count() const;
  const PairMatrix& pairs() const;

  // The best k-subset of `free`, or nullopt if none satisfies the constraints (or k > |free|, k < 1).
  std::optional<SetChoice> Best(GpuSet free, int k, const SelectOptions& options = {}) const;

  // Objective 1 for an arbitrary set (0 for sets of fewer than 2 GPUs).
  uint32_t RingMbps(GpuSet set) const;
  // Best ring of any s-subset of `within` (0 if |within| < s or s < 2).
  uint32_t BestRingMbps(GpuSet within, int s) const;
  // Objective 2 for the GPUs that stay free.
  uint64_t FutureScore(GpuSet remaining, const RequestMix& mix) const;
  // True if every pair of `set` is at least `min_link`.
  bool MeetsMinLink(GpuSet set, LinkClass min_link) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topofit
