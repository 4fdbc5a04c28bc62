#include "topology/ring_table.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <climits>

namespace topofit {

namespace {

// Held-Karp over bottleneck paths. A ring through `mask` is rooted at its lowest GPU `low` (every
// ring passes through it, so nothing is lost). path[mask * k + v] is the best bottleneck of a path
// that starts at low(mask), visits exactly `mask` and ends at v; growing a path only by GPUs above
// low keeps low(mask) the root. ring(mask) closes the best path back to the root.
// bw(a, b) gives the bandwidth between local indices a and b; ring receives 2^k entries.
template <typename Bw>
void BottleneckRingDp(int k, Bw bw, uint32_t* ring) {
  const uint32_t full = (uint32_t{1} << k) - 1;
  std::vector<uint32_t> path((size_t(full) + 1) * k, 0);
  ring[0] = 0;
  for (uint32_t mask = 1; mask <= full; ++mask) {
    const int low = std::countr_zero(mask);
    uint32_t* row = &path[size_t(mask) * k];
    if (mask == (uint32_t{1} << low)) {
      row[low] = UINT32_MAX;  // A lone root: no hop yet, so no bottleneck.
      ring[mask] = 0;
    } else {
      uint32_t best = 0;
      for (uint32_t m = mask & (mask - 1); m; m &= m - 1) {
        const int v = std::countr_zero(m);
        best = std::max(best, std::min(row[v], bw(v, low)));
      }
      ring[mask] = best;
    }
    // Extend to every absent GPU above the root.
    const uint32_t grow = full & ~mask & ~((uint32_t{2} << low) - 1);
    if (!grow) continue;
    for (uint32_t m = mask; m; m &= m - 1) {
      const int v = std::countr_zero(m);
      const uint32_t here = row[v];
      if (here == 0) continue;  // Unreachable (or a 0 MB/s hop): extensions stay 0 anyway.
      for (uint32_t g = grow; g; g &= g - 1) {
        const int u = std::countr_zero(g);
        uint32_t& next = path[size_t(mask | (uint32_t{1} << u)) * k + u];
        next = std::max(next, std::min(here, bw(v, u)));
      }
    }
  }
}

}  // namespace

RingTables::RingTables(const PairMatrix& pairs) : n_(pairs.n) {
  assert(n_ >= 1 && n_ <= kMaxGpus);
  BuildRing(pairs);
  BuildMinClass(pairs);
}

void RingTables::BuildRing(const PairMatrix& pairs) {
  ring_.assign(size_t{1} << n_, 0);
  BottleneckRingDp(n_, [&](int a, int b) { return pairs.bw(a, b); }, ring_.data());
  for (uint32_t mask = 0; mask <= full_mask(); ++mask) {
    const int pc = std::popcount(mask);
    whole_[pc] = std::max(whole_[pc], ring_[mask]);
  }
}

void RingTables::BuildMinClass(const PairMatrix& pairs) {
  min_class_.assign(size_t{1} << n_, static_cast<uint8_t>(LinkClass::Self));
  for (uint32_t mask = 1; mask <= full_mask(); ++mask) {
    const int low = std::countr_zero(mask);
    const uint32_t rest = mask & (mask - 1);
    uint8_t worst = min_class_[rest];
    for (uint32_t m = rest; m; m &= m - 1) {
      worst = std::min(worst, static_cast<uint8_t>(pairs.link(low, std::countr_zero(m)).cls));
    }
    min_class_[mask] = worst;
  }
}

const uint32_t* RingTables::BestSub(int s) const {
  if (s < 2 || s > n_) return nullptr;
  std::call_once(sub_once_[s], [&] {
    const uint32_t full = full_mask();
    auto table = std::make_unique<uint32_t[]>(size_t(full) + 1);
    // Subsets before supersets: every mask is scored from its one-smaller subsets.
    for (uint32_t mask = 0; mask <= full; ++mask) {
      const int pc = std::popcount(mask);
      uint32_t best = 0;
      if (pc == s) {
        best = ring_[mask];
      } else if (pc > s) {
        for (uint32_t m = mask; m; m &= m - 1) best = std::max(best, table[mask & ~(m & -m)]);
      }
      table[mask] = best;
    }
    sub_[s] = std::move(table);
    sub_built_.fetch_add(1, std::memory_order_relaxed);
  });
  return sub_[s].get();
}

size_t RingTables::MemoryBytes() const {
  return sizeof(*this) + ring_.size() * sizeof(uint32_t) + min_class_.size() +
         size_t(sub_built_.load(std::memory_order_relaxed)) * (size_t{1} << n_) * sizeof(uint32_t);
}

uint32_t ExactRing(const PairMatrix& pairs, const int* idx, int k) {
  if (k < 2) return 0;
  if (k == 2) return pairs.bw(idx[0], idx[1]);
  assert(k <= RingTables::kMaxGpus);
  std::vector<uint32_t> ring(size_t{1} << k);
  BottleneckRingDp(k, [&](int a, int b) { return pairs.bw(idx[a], idx[b]); }, ring.data());
  return ring.back();
}

}  // namespace topofit
