#pragma once
// RingTables: exact per-subset tables for GPU-set selection on nodes of up to 16 GPUs.
//
// For every subset `mask` of the node's GPUs (bit i = GPU i):
//   Ring(mask)      the best Hamiltonian ring through exactly `mask`, as fast as its slowest hop
//                   (bottleneck), in MB/s. 0 for fewer than 2 GPUs; a pair's own bandwidth for 2.
//   MinClass(mask)  the weakest link class among the pairs of `mask`; Self for fewer than 2 GPUs, so
//                   any single GPU meets every min-link constraint.
//   BestSub(s)[mask] the best Ring over the s-subsets of `mask` (0 if |mask| < s or s < 2).
//   BestWhole(s)    BestSub(s)[all GPUs].
// Ring and MinClass are built in the constructor (O(2^n n^2) Held-Karp bottleneck DP, O(2^n n));
// BestSub is built per size on first use (O(2^n n) each), so a selector only pays for the request
// sizes it is asked about. Memory for n = 16: Ring 256 KiB + MinClass 64 KiB + 256 KiB per BestSub
// size used; the DP's 1 MiB scratch is freed before the constructor returns.
//
// Thread-safety: immutable after construction except the lazily built BestSub tables, whose first
// build is guarded by std::call_once; all accessors may be called from many threads.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "topology/link_class.h"
#include "topology/pair_matrix.h"

namespace topofit {

class RingTables {
 public:
  static constexpr int kMaxGpus = 16;

  // Requires 1 <= pairs.n <= kMaxGpus.
  explicit RingTables(const PairMatrix& pairs);
  RingTables(const RingTables&) = delete;
  RingTables& operator=(const RingTables&) = delete;

  int n() const { return n_; }
  uint32_t full_mask() const { return (uint32_t{1} << n_) - 1; }
  uint32_t Ring(uint32_t mask) const { return ring_[mask]; }
  LinkClass MinClass(uint32_t mask) const { return static_cast<LinkClass>(min_class_[mask]); }
  const uint8_t* min_class_data() const { return min_class_.data(); }
  const uint32_t* ring_data() const { return ring_.data(); }

  // The table for size s (2 <= s <= n), built on first use; nullptr for other s.
  const uint32_t* BestSub(int s) const;
  // Best ring of any s-subset of the whole node; 0 when s < 2 or s > n.
  uint32_t BestWhole(int s) const { return s >= 2 && s <= n_ ? whole_[s] : 0; }

  // Approximate bytes held (excluding lazily built BestSub tables not yet used).
  size_t MemoryBytes() const;

 private:
  void BuildRing(const PairMatrix& pairs);
  void BuildMinClass(const PairMatrix& pairs);

  int n_;
  std::vector<uint32_t> ring_;
  std::vector<uint8_t> min_class_;
  std::array<uint32_t, kMaxGpus + 1> whole_{};
  mutable std::array<std::once_flag, kMaxGpus + 1> sub_once_;
  mutable std::array<std::unique_ptr<uint32_t[]>, kMaxGpus + 1> sub_;
  mutable std::atomic<int> sub_built_{0};  // For MemoryBytes() without touching sub_ racily.
};

// Exact bottleneck ring through the GPUs idx[0..k) (k <= 16) by the same DP, without tables:
// O(2^k k^2). Used on nodes too large for RingTables to score small sets exactly.
uint32_t ExactRing(const PairMatrix& pairs, const int* idx, int k);

}  // namespace topofit
