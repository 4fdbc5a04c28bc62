// Brute-force SetSelector (first version): correct, slow. Replaced by table-driven search.
#include "topology/set_selector.h"

#include <algorithm>
#include <bit>

namespace topofit {

struct SetSelector::Impl {
  PairMatrix pairs;
  RequestMix mix;
};

namespace {

uint32_t RingOf(const PairMatrix& p, GpuSet set) {
  std::vector<int> v = set.Indices();
  if (v.size() < 2) return 0;
  if (v.size() == 2) return p.bw(v[0], v[1]);
  uint32_t best = 0;
  // Fix v[0] first; permute the rest.
  do {
    uint32_t m = UINT32_MAX;
    for (size_t i = 0; i < v.size(); ++i) m = std::min(m, p.bw(v[i], v[(i + 1) % v.size()]));
    best = std::max(best, m);
  } while (std::next_permutation(v.begin() + 1, v.end()));
  return best;
}

template <typename F>
void ForEachSubset(GpuSet within, int k, F&& f) {
  std::vector<int> idx = within.Indices();
  int m = static_cast<int>(idx.size());
  if (k < 0 || k > m) return;
  std::vector<int> c(k);
  for (int i = 0; i < k; ++i) c[i] = i;
  while (true) {
    GpuSet s;
    for (int i : c) s.Add(idx[i]);
    f(s);
    int i = k - 1;
    while (i >= 0 && c[i] == m - k + i) --i;
    if (i < 0) return;
    ++c[i];
    for (int j = i + 1; j < k; ++j) c[j] = c[j - 1] + 1;
  }
}

bool LexLess(GpuSet a, GpuSet b) {
  uint64_t d = a.mask() ^ b.mask();
  return d && (a.mask() & d & (~d + 1));
}

}  // namespace

SetSelector::SetSelector(PairMatrix pairs, RequestMix default_mix)
    : impl_(std::make_unique<Impl>(Impl{std::move(pairs), std::move(default_mix)})) {}
SetSelector::~SetSelector() = default;

int SetSelector::gpu_count() const { return impl_->pairs.n; }
const PairMatrix& SetSelector::pairs() const { return impl_->pairs; }

uint32_t SetSelector::RingMbps(GpuSet set) const { return RingOf(impl_->pairs, set); }

uint32_t SetSelector::BestRingMbps(GpuSet within, int s) const {
  if (s < 2) return 0;
  uint32_t best = 0;
  ForEachSubset(within, s, [&](GpuSet x) { best = std::max(best, RingOf(impl_->pairs, x)); });
  return best;
}

uint64_t SetSelector::FutureScore(GpuSet remaining, const RequestMix& mix) const {
  uint64_t total = 0;
  GpuSet all = GpuSet::FirstN(impl_->pairs.n);
  for (const auto& e : mix.entries) {
    if (e.size < 1 || e.size > remaining.size()) continue;
    uint64_t ratio = 1'000'000;
    if (e.size >= 2) {
      uint64_t whole = BestRingMbps(all, e.size);
      if (whole > 0) ratio = 1'000'000ull * BestRingMbps(remaining, e.size) / whole;
    }
    total += uint64_t{e.weight} * ratio;
  }
  return total;
}

bool SetSelector::MeetsMinLink(GpuSet set, LinkClass min_link) const {
  std::vector<int> v = set.Indices();
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i + 1; j < v.size(); ++j)
      if (impl_->pairs.link(v[i], v[j]).cls < min_link) return false;
  return true;
}

std::optional<SetChoice> SetSelector::Best(GpuSet free, int k, const SelectOptions& options) const {
  free = free & GpuSet::FirstN(impl_->pairs.n);
  if (k < 1 || k > free.size()) return std::nullopt;
  const RequestMix& mix = options.mix ? *options.mix : impl_->mix;
  std::optional<SetChoice> best;
  ForEachSubset(free, k, [&](GpuSet s) {
    if (options.min_link && !MeetsMinLink(s, *options.min_link)) return;
    SetChoice c{s, RingMbps(s), FutureScore(free - s, mix)};
    if (!best || c.ring_mbps > best->ring_mbps ||
        (c.ring_mbps == best->ring_mbps &&
         (c.future > best->future || (c.future == best->future && LexLess(s, best->gpus))))) {
      best = c;
    }
  });
  return best;
}

}  // namespace topofit
