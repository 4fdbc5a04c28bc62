// SetSelector: exact search over per-subset tables for n <= 16, greedy above (see greedy_select.h).
//
// Exact path (1 <= n <= 16): RingTables gives every subset's best ring and weakest link class; the
// default mix's future score is precomputed for every subset of the node (2^n uint64). A query
// splits `free` into its lower and upper halves, lists each half's subsets by size, and scores
// every (low j-subset | high (k-j)-subset): one ring lookup (and one min-class lookup under a
// min-link) per k-subset; the future score is looked up only for subsets tied with the best ring.
//
// Cache: answers for the default mix are memoised in QueryCache, a dense lock-free table indexed by
// (k, min-link slot, free mask); slices of 2^n words are allocated on first use of a (k, min-link)
// pair, so memory is 4 * 2^n bytes per pair actually asked (256 KiB at n = 16, 1 KiB at n = 8) and
// at most 4 * 2^n * (n+1) * 8 bytes. Custom mixes bypass the cache: a cold exact query is already
// tens of microseconds, and keying by mix value would let clients grow the cache without bound.
// The greedy path (n > 16) is not cached either.

#include "topology/set_selector.h"

#include <algorithm>
#include <bit>

#include "topology/greedy_select.h"
#include "topology/ring_table.h"

namespace topofit {

namespace {

constexpr uint64_t kScale = 1'000'000;
constexpr int kLinkSlots = int(LinkClass::Self) + 2;  // "no constraint" plus one per class.

int LinkSlot(const std::optional<LinkClass>& min_link) {
  return min_link ? int(*min_link) + 1 : 0;
}

// One mix entry's share of the future score, before its weight (see FutureScore in the header).
uint64_t EntryRatio(int s, int remaining, uint32_t best_remaining, uint32_t best_whole) {
  if (s < 1 || s > remaining) return 0;
  if (s == 1 || best_whole == 0) return kScale;
  return kScale * best_remaining / best_whole;
}

// True if a's sorted index list is lexicographically smaller than b's (|a| == |b|): the lowest GPU
// in exactly one of the two sets decides.
bool LexLess(uint64_t a, uint64_t b) {
  const uint64_t d = a ^ b;
  return (a & d & (~d + 1)) != 0;
}

// QueryCache: lock-free memo of exact Best() answers under the default mix. A word per
// (k, min-link slot, free mask): 0 = not yet known, 1 = no feasible set, else chosen mask + 2.
// Answers are deterministic, so racing writers store the same word and relaxed order suffices; the
// slice pointer is published with release/acquire.
class QueryCache {
 public:
  explicit QueryCache(int n) : n_(n), slices_(size_t(n + 1) * kLinkSlots) {}
  ~QueryCache() {
    for (auto& s : slices_) delete[] s.load(std::memory_order_relaxed);
  }
  QueryCache(const QueryCache&) = delete;
  QueryCache& operator=(const QueryCache&) = delete;

  uint32_t Get(uint32_t free, int k, int slot) const {
    const auto* slice = slices_[size_t(k) * kLinkSlots + slot].load(std::memory_order_acquire);
    return slice ? slice[free].load(std::memory_order_relaxed) : 0;
  }
  void Put(uint32_t free, int k, int slot, uint32_t word) {
    auto& cell = slices_[size_t(k) * kLinkSlots + slot];
    auto* slice = cell.load(std::memory_order_acquire);
    if (!slice) {
      auto* fresh = new std::atomic<uint32_t>[size_t{1} << n_]();
      if (cell.compare_exchange_strong(slice, fresh, std::memory_order_acq_rel)) {
        slice = fresh;
      } else {
        delete[] fresh;  // Another thread published first; `slice` now holds its table.
      }
    }
    slice[free].store(word, std::memory_order_relaxed);
  }

 private:
  int n_;
  std::vector<std::atomic<std::atomic<uint32_t>*>> slices_;
};

// The subsets of up to 8 GPUs (node indices pos[0..bits)) as node masks, grouped by size:
// masks[start[j] .. start[j + 1]) are the j-GPU subsets.
struct HalfSubsets {
  uint32_t masks[256];
  uint16_t start[10];
  int bits = 0;

  void Build(const int* pos, int count) {
    bits = count;
    uint32_t by_code[256];
    uint16_t fill[10] = {};
    by_code[0] = 0;
    for (uint32_t c = 0; c < (uint32_t{1} << count); ++c) {
      if (c) by_code[c] = by_code[c & (c - 1)] | (uint32_t{1} << pos[std::countr_zero(c)]);
      ++fill[std::popcount(c)];
    }
    start[0] = 0;
    for (int j = 0; j <= 8; ++j) start[j + 1] = uint16_t(start[j] + fill[j]), fill[j] = start[j];
    for (uint32_t c = 0; c < (uint32_t{1} << count); ++c) masks[fill[std::popcount(c)]++] = by_code[c];
  }
};

}  // namespace

struct SetSelector::Impl {
  PairMatrix pairs;
  RequestMix mix;
  std::unique_ptr<RingTables> tables;     // Exact path only.
  std::vector<uint64_t> default_future;   // Exact path: FutureScore(mask, mix) for every mask.
  std::unique_ptr<QueryCache> cache;      // Exact path only.
  std::unique_ptr<GreedySets> greedy;     // n == 0 or n > 16.

  // A mix entry resolved against the tables, so that scoring a subset is a few lookups.
  struct Term {
    int size;
    uint64_t weight;
    const uint32_t* sub;  // BestSub(size), or nullptr when size < 2 or size > n.
    uint32_t whole;
  };

  std::vector<Term> Resolve(const RequestMix& m) const {
    std::vector<Term> terms;
    for (const auto& e : m.entries) {
      terms.push_back({e.size, e.weight, tables->BestSub(e.size), tables->BestWhole(e.size)});
    }
    return terms;
  }

  static uint64_t ExactFuture(uint32_t remaining, const std::vector<Term>& terms) {
    const int count = std::popcount(remaining);
    uint64_t total = 0;
    for (const Term& t : terms) {
      total += t.weight * EntryRatio(t.size, count, t.sub ? t.sub[remaining] : 0, t.whole);
    }
    return total;
  }

  uint64_t GreedyFuture(GpuSet remaining, const RequestMix& m) const {
    uint64_t total = 0;
    for (const auto& e : m.entries) {
      const bool ring = e.size >= 2 && e.size <= remaining.size();
      total += uint64_t{e.weight} * EntryRatio(e.size, remaining.size(),
                                               ring ? greedy->BestRing(remaining, e.size) : 0,
                                               greedy->BestWhole(e.size));
    }
    return total;
  }

  std::optional<SetChoice> ExactBest(uint32_t free, int k, int slot, const RequestMix* custom) const;
  std::optional<SetChoice> GreedyBest(GpuSet free, int k, std::optional<LinkClass> min_link,
                                      const RequestMix& m) const;
};

std::optional<SetChoice> SetSelector::Impl::ExactBest(uint32_t free, int k, int slot,
                                                      const RequestMix* custom) const {
  int pos[RingTables::kMaxGpus];
  const int m = std::popcount(free);
  for (uint32_t f = free, j = 0; f; f &= f - 1) pos[j++] = std::countr_zero(f);
  HalfSubsets low, high;
  low.Build(pos, (m + 1) / 2);  // Even halves: 2 * 2^(m/2) list entries, at most 256 each.
  high.Build(pos + low.bits, m - low.bits);

  std::vector<Term> terms;
  if (custom) terms = Resolve(*custom);
  auto future = [&](uint32_t chosen) {
    const uint32_t rest = free & ~chosen;
    return custom ? ExactFuture(rest, terms) : default_future[rest];
  };

  const uint32_t* ring = tables->ring_data();
  const uint8_t* min_class = tables->min_class_data();
  const uint8_t need = slot ? uint8_t(slot - 1) : 0;  // 0 (Sys): every pair qualifies.
  bool found = false, future_known = false;
  uint32_t best = 0, best_ring = 0;
  uint64_t best_future = 0;
  // Every k-subset of free is (j low GPUs) | (k - j high GPUs); no loop-carried dependency, so
  // the table loads of successive subsets overlap.
  for (int j = std::max(0, k - high.bits); j <= std::min(k, low.bits); ++j) {
    const uint32_t* hb = high.masks + high.start[k - j];
    const uint32_t* he = high.masks + high.start[k - j + 1];
    for (const uint32_t* a = low.masks + low.start[j]; a != low.masks + low.start[j + 1]; ++a) {
      for (const uint32_t* b = hb; b != he; ++b) {
        const uint32_t s = *a | *b;
        if (need && min_class[s] < need) continue;
        const uint32_t r = ring[s];
        if (r < best_ring) continue;  // The common case once a good set is known.
        if (!found || r > best_ring) {
          found = true, future_known = false, best = s, best_ring = r;
          continue;
        }
        if (!future_known) best_future = future(best), future_known = true;
        const uint64_t f = future(s);
        if (f > best_future || (f == best_future && LexLess(s, best))) best = s, best_future = f;
      }
    }
  }
  if (!found) return std::nullopt;
  if (!future_known) best_future = future(best);
  return SetChoice{GpuSet(best), best_ring, best_future};
}

std::optional<SetChoice> SetSelector::Impl::GreedyBest(GpuSet free, int k,
                                                       std::optional<LinkClass> min_link,
                                                       const RequestMix& m) const {
  std::optional<SetChoice> best;
  for (GpuSet c : greedy->Candidates(free, k, min_link)) {
    const uint32_t r = greedy->Ring(c);
    if (!best || r > best->ring_mbps) {
      best = SetChoice{c, r, GreedyFuture(free - c, m)};
    } else if (r == best->ring_mbps) {
      const uint64_t f = GreedyFuture(free - c, m);
      if (f > best->future || (f == best->future && LexLess(c.mask(), best->gpus.mask()))) {
        best = SetChoice{c, r, f};
      }
    }
  }
  return best;
}

SetSelector::SetSelector(PairMatrix pairs, RequestMix default_mix) : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.pairs = std::move(pairs);
  im.mix = std::move(default_mix);
  const int n = im.pairs.n;
  if (n >= 1 && n <= RingTables::kMaxGpus) {
    im.tables = std::make_unique<RingTables>(im.pairs);
    const std::vector<Impl::Term> terms = im.Resolve(im.mix);
    im.default_future.resize(size_t{1} << n);
    for (uint32_t mask = 0; mask <= im.tables->full_mask(); ++mask) {
      im.default_future[mask] = Impl::ExactFuture(mask, terms);
    }
    im.cache = std::make_unique<QueryCache>(n);
  } else {
    im.greedy = std::make_unique<GreedySets>(&im.pairs);
  }
}

SetSelector::~SetSelector() = default;

int SetSelector::gpu_count() const { return impl_->pairs.n; }
const PairMatrix& SetSelector::pairs() const { return impl_->pairs; }

std::optional<SetChoice> SetSelector::Best(GpuSet free, int k, const SelectOptions& options) const {
  const Impl& im = *impl_;
  free = free & GpuSet::FirstN(im.pairs.n);
  if (k < 1 || k > free.size()) return std::nullopt;
  const bool default_mix = !options.mix || *options.mix == im.mix;
  if (!im.tables) return im.GreedyBest(free, k, options.min_link, default_mix ? im.mix : *options.mix);

  const uint32_t f = uint32_t(free.mask());
  const int slot = LinkSlot(options.min_link);
  if (!default_mix) return im.ExactBest(f, k, slot, options.mix);
  if (options.bypass_cache) return im.ExactBest(f, k, slot, nullptr);
  uint32_t word = im.cache->Get(f, k, slot);
  if (word == 0) {
    std::optional<SetChoice> choice = im.ExactBest(f, k, slot, nullptr);
    im.cache->Put(f, k, slot, choice ? uint32_t(choice->gpus.mask()) + 2 : 1);
    return choice;
  }
  if (word == 1) return std::nullopt;
  const uint32_t chosen = word - 2;
  return SetChoice{GpuSet(chosen), im.tables->Ring(chosen), im.default_future[f & ~chosen]};
}

uint32_t SetSelector::RingMbps(GpuSet set) const {
  set = set & GpuSet::FirstN(impl_->pairs.n);
  return impl_->tables ? impl_->tables->Ring(uint32_t(set.mask())) : impl_->greedy->Ring(set);
}

uint32_t SetSelector::BestRingMbps(GpuSet within, int s) const {
  within = within & GpuSet::FirstN(impl_->pairs.n);
  if (!impl_->tables) return impl_->greedy->BestRing(within, s);
  const uint32_t* sub = impl_->tables->BestSub(s);
  return sub ? sub[within.mask()] : 0;
}

uint64_t SetSelector::FutureScore(GpuSet remaining, const RequestMix& mix) const {
  const Impl& im = *impl_;
  remaining = remaining & GpuSet::FirstN(im.pairs.n);
  if (!im.tables) return im.GreedyFuture(remaining, mix);
  const uint32_t r = uint32_t(remaining.mask());
  return mix == im.mix ? im.default_future[r] : Impl::ExactFuture(r, im.Resolve(mix));
}

bool SetSelector::MeetsMinLink(GpuSet set, LinkClass min_link) const {
  set = set & GpuSet::FirstN(impl_->pairs.n);
  return impl_->tables ? impl_->tables->MinClass(uint32_t(set.mask())) >= min_link
                       : impl_->greedy->MeetsMinLink(set, min_link);
}

}  // namespace topofit
