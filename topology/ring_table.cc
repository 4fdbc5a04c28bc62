#include "topology/ring_table.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <climits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace topofit {

namespace {

// max over v < 16 of min(a[v], b[v]): the best bottleneck of one hop appended to 16 path ends.
inline uint8_t MaxMin16(const uint8_t* a, const uint8_t* b) {
#if defined(__SSE2__)
  __m128i x = _mm_min_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)),
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
  x = _mm_max_epu8(x, _mm_srli_si128(x, 8));
  x = _mm_max_epu8(x, _mm_srli_si128(x, 4));
  x = _mm_max_epu8(x, _mm_srli_si128(x, 2));
  x = _mm_max_epu8(x, _mm_srli_si128(x, 1));
  return uint8_t(_mm_cvtsi128_si32(x));
#else
  uint8_t best = 0;
  for (int v = 0; v < 16; ++v) best = std::max(best, std::min(a[v], b[v]));
  return best;
#endif
}

// Held-Karp over bottleneck paths. A ring through `mask` is rooted at its lowest GPU `low` (every
// ring passes through it, so nothing is lost). path[mask][v] is the best bottleneck of a path that
// starts at low(mask), visits exactly `mask` and ends at v; it is pulled from the paths over
// mask - {v}, whose root is the same GPU. ring(mask) closes the best path back to the root.
//
// Bandwidths are first replaced by their rank among the distinct values (a bottleneck only compares
// values), so a path row is 16 bytes: the table is 2^k * 16 bytes (1 MiB at k = 16, cache friendly)
// and the max-min over a row vectorises. Entries for GPUs outside the mask stay 0, so rows are
// scanned densely. bw(a, b) gives the bandwidth between local indices a and b; ring receives 2^k.
template <typename Bw>
void BottleneckRingDp(int k, Bw bw, uint32_t* ring) {
  constexpr int kRow = 16;
  constexpr uint8_t kRoot = 255;  // A lone root: no hop yet, so no bottleneck.
  std::vector<uint32_t> values{0};
  for (int a = 0; a < k; ++a)
    for (int b = a + 1; b < k; ++b) values.push_back(bw(a, b));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());  // <= 121 at k = 16.
  alignas(16) uint8_t rank[kRow][kRow] = {};
  for (int a = 0; a < k; ++a)
    for (int b = 0; b < k; ++b)
      if (a != b) {
        rank[a][b] = uint8_t(std::lower_bound(values.begin(), values.end(), bw(a, b)) - values.begin());
      }

  const uint32_t full = (uint32_t{1} << k) - 1;
  std::vector<uint8_t> path((size_t(full) + 1) * kRow, 0);
  ring[0] = 0;
  for (uint32_t mask = 1; mask <= full; ++mask) {
    const int low = std::countr_zero(mask);
    uint8_t* row = &path[size_t(mask) * kRow];
    if (mask == (uint32_t{1} << low)) {
      row[low] = kRoot;
      ring[mask] = 0;
      continue;
    }
    for (uint32_t m = mask & (mask - 1); m; m &= m - 1) {
      const int u = std::countr_zero(m);
      const uint8_t* prev = &path[size_t(mask & ~(uint32_t{1} << u)) * kRow];
      row[u] = MaxMin16(prev, rank[u]);
    }
    // row[low] is 0 here: the root only ends the path of its lone self.
    ring[mask] = values[MaxMin16(row, rank[low])];
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
