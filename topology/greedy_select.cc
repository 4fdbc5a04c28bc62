#include "topology/greedy_select.h"

#include <algorithm>
#include <bit>

#include "topology/ring_table.h"

namespace topofit {

GreedySets::GreedySets(const PairMatrix* pairs)
    : pairs_(pairs),
      at_least_(size_t(LinkClass::Self) + 1, std::vector<uint64_t>(pairs->n, 0)),
      whole_once_(std::make_unique<std::once_flag[]>(pairs->n + 1)),
      whole_(pairs->n + 1, 0) {
  const int n = pairs->n;
  for (int c = 0; c <= int(LinkClass::Self); ++c) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (j != i && int(pairs->link(i, j).cls) >= c) at_least_[c][i] |= uint64_t{1} << j;
      }
    }
  }
}

GpuSet GreedySets::Grow(int seed, GpuSet pool, int k, std::optional<LinkClass> min_link) const {
  const int n = pairs_->n;
  std::vector<uint32_t> max_bw(n, 0);
  std::vector<uint64_t> sum_bw(n, 0);
  GpuSet set;
  uint64_t eligible = pool.mask();
  int added = seed;
  for (;;) {
    set.Add(added);
    eligible &= ~(uint64_t{1} << added);
    if (min_link) eligible &= at_least_[size_t(*min_link)][added];
    if (set.size() == k) return set;
    int pick = -1;
    for (uint64_t m = eligible; m; m &= m - 1) {
      const int c = std::countr_zero(m);
      const uint32_t b = pairs_->bw(c, added);
      max_bw[c] = std::max(max_bw[c], b);
      sum_bw[c] += b;
      if (pick < 0 || max_bw[c] > max_bw[pick] ||
          (max_bw[c] == max_bw[pick] && sum_bw[c] > sum_bw[pick])) {
        pick = c;  // Strict improvements only: the lowest index wins ties.
      }
    }
    if (pick < 0) return GpuSet();  // Nothing eligible left: no k-set from this seed.
    added = pick;
  }
}

std::vector<GpuSet> GreedySets::Candidates(GpuSet pool, int k,
                                           std::optional<LinkClass> min_link) const {
  std::vector<GpuSet> out;
  if (k < 1 || k > pool.size()) return out;
  for (int seed : pool.Indices()) {
    GpuSet s = Grow(seed, pool, k, min_link);
    if (s.size() == k && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

uint32_t GreedySets::NearestNeighbourRing(const std::vector<int>& members) const {
  const int k = static_cast<int>(members.size());
  uint32_t best = 0;
  std::vector<char> used(k);
  for (int start = 0; start < k; ++start) {
    std::fill(used.begin(), used.end(), 0);
    used[start] = 1;
    int at = start;
    uint32_t bottleneck = UINT32_MAX;
    for (int step = 1; step < k; ++step) {
      int next = -1;
      for (int j = 0; j < k; ++j) {
        if (!used[j] && (next < 0 || pairs_->bw(members[at], members[j]) >
                                         pairs_->bw(members[at], members[next]))) {
          next = j;
        }
      }
      bottleneck = std::min(bottleneck, pairs_->bw(members[at], members[next]));
      used[next] = 1;
      at = next;
    }
    bottleneck = std::min(bottleneck, pairs_->bw(members[at], members[start]));
    best = std::max(best, bottleneck);
  }
  return best;
}

uint32_t GreedySets::Ring(GpuSet set) const {
  std::vector<int> members = set.Indices();
  const int k = static_cast<int>(members.size());
  if (k < 2) return 0;
  if (k <= kExactRing) return ExactRing(*pairs_, members.data(), k);
  return NearestNeighbourRing(members);
}

uint32_t GreedySets::BestRing(GpuSet within, int s) const {
  if (s < 2 || s > within.size()) return 0;
  uint32_t best = 0;
  for (GpuSet c : Candidates(within, s, std::nullopt)) best = std::max(best, Ring(c));
  return best;
}

uint32_t GreedySets::BestWhole(int s) const {
  if (s < 2 || s > pairs_->n) return 0;
  std::call_once(whole_once_[s], [&] { whole_[s] = BestRing(GpuSet::FirstN(pairs_->n), s); });
  return whole_[s];
}

bool GreedySets::MeetsMinLink(GpuSet set, LinkClass min_link) const {
  for (uint64_t m = set.mask(); m; m &= m - 1) {
    const int i = std::countr_zero(m);
    if (!(set - GpuSet(uint64_t{1} << i)).IsSubsetOf(GpuSet(at_least_[size_t(min_link)][i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace topofit
