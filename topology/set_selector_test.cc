// SetSelector against an independent brute-force oracle, plus hand-checked placements.
//
// The oracle shares no code with the selector. Ring quality is found by a different algorithm: for
// each candidate threshold t (the set's distinct pair bandwidths, best first) a depth-first search
// looks for a simple cycle of the wanted length using only hops of at least t; the first t that has
// one is the best bottleneck ring. Sets are enumerated as index vectors, the future score is
// recomputed from the header's definition, and ties are broken by comparing index vectors.

#include "topology/set_selector.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <random>

#include "topology/set_selector_testdata.h"

using namespace topofit;
using namespace topofit::testing;

namespace {

// ---- Oracle -------------------------------------------------------------------------------------

class Oracle {
 public:
  explicit Oracle(const PairMatrix& p) : p_(p) {}

  // Best ring over the s-subsets of `within` (a list of GPUs).
  uint32_t BestRing(const std::vector<int>& within, int s) {
    if (s < 2 || s > int(within.size())) return 0;
    uint64_t key = 0;
    for (int g : within) key |= uint64_t{1} << g;
    auto [it, fresh] = memo_.try_emplace({key, s}, 0);
    if (!fresh) return it->second;
    std::vector<uint32_t> levels;
    for (int a : within)
      for (int b : within)
        if (a < b) levels.push_back(p_.bw(a, b));
    std::sort(levels.rbegin(), levels.rend());
    for (uint32_t t : levels) {
      if (HasCycle(within, s, t)) return it->second = t;
    }
    return it->second = 0;
  }

  uint32_t Ring(const std::vector<int>& set) { return BestRing(set, int(set.size())); }

  uint64_t Future(const std::vector<int>& remaining, const RequestMix& mix) {
    std::vector<int> all(p_.n);
    for (int i = 0; i < p_.n; ++i) all[i] = i;
    uint64_t total = 0;
    for (const auto& e : mix.entries) {
      uint64_t ratio = 0;
      if (e.size >= 1 && e.size <= int(remaining.size())) {
        const uint64_t whole = BestRing(all, e.size);
        const uint64_t scale = 1'000'000;  // 64-bit: scale * MB/s overflows 32 bits.
        ratio = (e.size == 1 || whole == 0) ? scale : scale * BestRing(remaining, e.size) / whole;
      }
      total += e.weight * ratio;
    }
    return total;
  }

  bool Meets(const std::vector<int>& set, std::optional<LinkClass> min_link) const {
    if (!min_link) return true;
    for (int a : set)
      for (int b : set)
        if (a != b && p_.link(a, b).cls < *min_link) return false;
    return true;
  }

  std::optional<SetChoice> Best(const std::vector<int>& free, int k,
                                std::optional<LinkClass> min_link, const RequestMix& mix) {
    std::optional<SetChoice> best;
    std::vector<int> best_list;
    ForEachCombination(free, k, [&](const std::vector<int>& set) {
      if (!Meets(set, min_link)) return;
      std::vector<int> rest;
      for (int g : free)
        if (std::find(set.begin(), set.end(), g) == set.end()) rest.push_back(g);
      const uint32_t ring = Ring(set);
      const uint64_t future = Future(rest, mix);
      const bool better = !best || ring > best->ring_mbps ||
                          (ring == best->ring_mbps &&
                           (future > best->future || (future == best->future && set < best_list)));
      if (better) best = SetChoice{GpuSet::Of(set), ring, future}, best_list = set;
    });
    return best;
  }

  static void ForEachCombination(const std::vector<int>& from, int k,
                                 const std::function<void(const std::vector<int>&)>& f) {
    std::vector<int> cur;
    std::function<void(size_t)> rec = [&](size_t i) {
      if (int(cur.size()) == k) return f(cur);
      if (i == from.size()) return;
      cur.push_back(from[i]);
      rec(i + 1);
      cur.pop_back();
      rec(i + 1);
    };
    if (k >= 1 && k <= int(from.size())) rec(0);
  }

 private:
  // A simple cycle of exactly s GPUs of `within`, every hop >= t. The cycle is rooted at its lowest
  // GPU; a 2-cycle is one pair used both ways, as a 2-GPU ring is.
  bool HasCycle(const std::vector<int>& within, int s, uint32_t t) const {
    std::vector<char> used(p_.n, 0);
    std::function<bool(int, int, int)> dfs = [&](int root, int at, int depth) -> bool {
      if (depth == s) return p_.bw(at, root) >= t;
      for (int nx : within) {
        if (nx <= root || used[nx] || p_.bw(at, nx) < t) continue;
        used[nx] = 1;
        const bool ok = dfs(root, nx, depth + 1);
        used[nx] = 0;
        if (ok) return true;
      }
      return false;
    };
    for (int root : within) {
      used[root] = 1;
      const bool ok = dfs(root, root, 1);
      used[root] = 0;
      if (ok) return true;
    }
    return false;
  }

  const PairMatrix& p_;
  std::map<std::pair<uint64_t, int>, uint32_t> memo_;
};

std::string Show(const std::optional<SetChoice>& c) {
  if (!c) return "none";
  return "{" + c->gpus.ToString() + "} ring=" + std::to_string(c->ring_mbps) +
         " future=" + std::to_string(c->future);
}

bool Same(const std::optional<SetChoice>& a, const std::optional<SetChoice>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->gpus == b->gpus && a->ring_mbps == b->ring_mbps && a->future == b->future);
}

std::vector<int> RandomFree(std::mt19937_64& rng, int n, int max_free) {
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), rng);
  // Some GPUs are busy or unhealthy: keep a random number, at most max_free.
  const int keep = 1 + int(rng() % std::min(n, max_free));
  all.resize(keep);
  std::sort(all.begin(), all.end());
  return all;
}

std::optional<LinkClass> RandomMinLink(std::mt19937_64& rng) {
  static const std::optional<LinkClass> kChoices[] = {
      std::nullopt, std::nullopt, std::nullopt, LinkClass::Nv,  LinkClass::Nv,
      LinkClass::Pix, LinkClass::Pxb, LinkClass::Phb, LinkClass::Node, LinkClass::Sys};
  return kChoices[rng() % std::size(kChoices)];
}

RequestMix RandomMix(std::mt19937_64& rng, int n) {
  RequestMix mix;
  mix.entries.clear();
  const int entries = 1 + int(rng() % 4);
  for (int i = 0; i < entries; ++i) {
    mix.entries.push_back({1 + int(rng() % std::min(n + 1, 8)), uint32_t(1 + rng() % 5)});
  }
  return mix;
}

struct Stats {
  int topologies = 0, queries = 0, failures = 0;
};

// Runs `queries` random Best() queries (and the helper functions) on one topology.
void CheckTopology(const PairMatrix& p, std::mt19937_64& rng, int queries, Stats& stats) {
  const bool custom_default = rng() % 4 == 0;
  const RequestMix default_mix = custom_default ? RandomMix(rng, p.n) : RequestMix{};
  SetSelector sel(p, default_mix);
  Oracle oracle(p);
  ++stats.topologies;
  const int max_free = p.n > 12 ? 9 : 10;  // Keeps the oracle's enumeration small.
  for (int q = 0; q < queries; ++q) {
    const std::vector<int> free = RandomFree(rng, p.n, max_free);
    const int k = 1 + int(rng() % std::min<size_t>(free.size(), 7));
    SelectOptions opt;
    opt.min_link = RandomMinLink(rng);
    RequestMix custom;
    if (rng() % 3 == 0) custom = RandomMix(rng, p.n), opt.mix = &custom;
    const RequestMix& mix = opt.mix ? custom : default_mix;
    const auto want = oracle.Best(free, k, opt.min_link, mix);
    const GpuSet free_set = GpuSet::Of(free);
    const auto got = sel.Best(free_set, k, opt);
    const auto again = sel.Best(free_set, k, opt);  // A cache hit when the mix is the default.
    ++stats.queries;
    if (!Same(got, want) || !Same(again, want)) {
      if (++stats.failures <= 10) {
        FAIL_CHECK("n=" << p.n << " free={" << free_set.ToString() << "} k=" << k << " min_link="
                        << (opt.min_link ? std::string(ToString(*opt.min_link)) : "-")
                        << " got " << Show(got) << " again " << Show(again) << " want "
                        << Show(want));
      }
    }
    // The building blocks, on the query's free set.
    const int s = 1 + int(rng() % int(free.size()));
    if (sel.BestRingMbps(free_set, s) != oracle.BestRing(free, s) ||
        sel.FutureScore(free_set, mix) != oracle.Future(free, mix) ||
        (opt.min_link && sel.MeetsMinLink(free_set, *opt.min_link) != oracle.Meets(free, opt.min_link))) {
      if (++stats.failures <= 10) {
        FAIL_CHECK("helper mismatch n=" << p.n << " free={" << free_set.ToString() << "} s=" << s
                   << " best ring " << sel.BestRingMbps(free_set, s) << " vs " << oracle.BestRing(free, s)
                   << " future " << sel.FutureScore(free_set, mix) << " vs " << oracle.Future(free, mix));
      }
    }
  }
}

}  // namespace

TEST_CASE("SetSelector matches the brute-force oracle on thousands of topologies") {
  std::mt19937_64 rng(20240611);
  Stats stats;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1500; ++i) {
    const int n = 2 + int(rng() % 11);  // 2..12 GPUs: cheap tables, many topologies.
    CheckTopology(RandomMatrix(rng, n), rng, 6, stats);
  }
  for (int i = 0; i < 120; ++i) CheckTopology(RandomMatrix(rng, 13 + int(rng() % 4)), rng, 12, stats);
  for (int i = 0; i < 200; ++i) CheckTopology(Degrade(rng, Dgx1(), 1 + int(rng() % 3)), rng, 10, stats);
  for (int i = 0; i < 60; ++i) CheckTopology(Degrade(rng, HybridMesh16(), int(rng() % 4)), rng, 12, stats);
  for (int n : {2, 4, 8, 16}) CheckTopology(NvSwitch(n), rng, 40, stats);
  CheckTopology(TwoIslands16(), rng, 60, stats);
  for (int n : {2, 3, 4, 6, 8, 10, 16}) CheckTopology(PcieTree(n, LinkClass::Node), rng, 30, stats);
  for (int n : {4, 8, 16}) CheckTopology(PcieTree(n, LinkClass::Phb), rng, 30, stats);
  CheckTopology(Dgx1(), rng, 200, stats);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("oracle: " << stats.topologies << " topologies, " << stats.queries << " queries, "
                     << stats.failures << " failures, " << secs << " s");
  CHECK(stats.failures == 0);
}

// ---- Hand-checked placements ------------------------------------------------------------------

namespace {
GpuSet G(std::initializer_list<int> l) { return GpuSet::Of(std::vector<int>(l)); }
}  // namespace

TEST_CASE("DGX-1 hybrid cube mesh: hand-checked choices") {
  SetSelector sel(Dgx1());
  const GpuSet all = GpuSet::FirstN(8);

  // The NV2 links form the 8-cycle 0-3-2-1-5-6-7-4-0, so the whole node rings at NV2 speed.
  CHECK(sel.RingMbps(all) == 50000);
  // No 4-cycle uses NV2 only (the NV2 cycle has no NV2 chords), so the best quad rings at NV1.
  CHECK(sel.BestRingMbps(all, 4) == 25000);

  // k=4 idle: many quads ring at 25000; {0,1,2,3} leaves {4,5,6,7}, itself a fully NVLinked quad
  // with an NV2 pair, so the future is perfect for sizes 1, 2 and 4 (8 no longer fits): 3,000,000.
  // {0,3,4,7} / {1,2,5,6} ties too; {0,1,2,3} is lexicographically first.
  auto quad = sel.Best(all, 4);
  REQUIRE(quad);
  CHECK(quad->gpus == G({0, 1, 2, 3}));
  CHECK(quad->ring_mbps == 25000);
  CHECK(quad->future == 3'000'000);
  CHECK(sel.MeetsMinLink(quad->gpus, LinkClass::Nv));

  // k=2 idle: an NV2 pair (50000). Every NV2 pair leaves a NV quad and another NV2 pair, so the
  // future ties at 3,000,000 and the first NV2 pair in lexicographic order wins: {0,3}.
  auto pair = sel.Best(all, 2);
  REQUIRE(pair);
  CHECK(pair->gpus == G({0, 3}));
  CHECK(pair->ring_mbps == 50000);

  // GPUs 0 and 1 taken. The free NV2 pairs are {2,3}, {4,7}, {5,6}. Taking {2,3} leaves the NV quad
  // {4,5,6,7} (ratio 1 for size 4); taking {4,7} leaves {2,3,5,6}, where GPU 3 has no NVLink to 5
  // or 6, so its best quad ring is SYS (6000 / 25000 = 240,000). Keep the quad: {2,3}.
  const GpuSet busy01 = all - G({0, 1});
  auto keep_quad = sel.Best(busy01, 2);
  REQUIRE(keep_quad);
  CHECK(keep_quad->gpus == G({2, 3}));
  CHECK(keep_quad->future == 3'000'000);
  CHECK(sel.FutureScore(busy01 - G({4, 7}), RequestMix{}) == 2'240'000);

  // k=8 on an idle node is the whole node; k=8 with one GPU busy is impossible.
  CHECK(sel.Best(all, 8)->gpus == all);
  CHECK_FALSE(sel.Best(all - G({5}), 8));

  // Only {0,5,6,7} free: GPU 0 has no NVLink to 5, 6 or 7. k=3 with min-link NV must pick the NV
  // triangle {5,6,7} (5-6 NV2, 6-7 NV2, 5-7 NV1: ring 25000); k=4 with NV is infeasible; without
  // the constraint k=4 is the only set, ringing at SYS speed.
  const GpuSet odd = G({0, 5, 6, 7});
  SelectOptions nv;
  nv.min_link = LinkClass::Nv;
  auto tri = sel.Best(odd, 3, nv);
  REQUIRE(tri);
  CHECK(tri->gpus == G({5, 6, 7}));
  CHECK(tri->ring_mbps == 25000);
  CHECK_FALSE(sel.Best(odd, 4, nv));
  CHECK(sel.Best(odd, 4)->ring_mbps == 6000);

  // k=1: every GPU has quality 0. Taking 0, 5 or 7 from {0,5,6,7} still leaves an NV2 pair (5-6,
  // 6-7, 5-6), future 2,000,000 (size 4 no longer fits); taking 6 leaves only the NV1 pair 5-7
  // (1,500,000). Lexicographic order then picks GPU 0, the one no NVLink set could use anyway.
  CHECK(sel.Best(odd, 1)->gpus == G({0}));
  // Degenerate requests.
  CHECK_FALSE(sel.Best(all, 0));
  CHECK_FALSE(sel.Best(all, 9));
  CHECK_FALSE(sel.Best(GpuSet(), 1));
}

TEST_CASE("NVSwitch islands, PCIe trees and all-equal fabrics") {
  // Two NVSwitch islands: with {6,7} | {8..11} free, k=2 takes {6,7} and keeps the 4-GPU island
  // slice {8..11} whole (taking {8,9} would leave {6,7,10,11}, whose quad ring crosses SYS).
  SetSelector islands(TwoIslands16());
  const GpuSet free = G({6, 7, 8, 9, 10, 11});
  CHECK(islands.Best(free, 2)->gpus == G({6, 7}));
  // k=4 takes the one quad inside an island.
  CHECK(islands.Best(free, 4)->gpus == G({8, 9, 10, 11}));
  CHECK(islands.Best(free, 4)->ring_mbps == 300000);
  // The idle 16-GPU node: k=8 is one island, the first in order.
  CHECK(islands.Best(GpuSet::FirstN(16), 8)->gpus == GpuSet::FirstN(8));

  // One NVSwitch: every set is equal on quality and future, so the lexicographic rule decides.
  SetSelector flat(NvSwitch(8));
  CHECK(flat.Best(GpuSet::FirstN(8), 4)->gpus == G({0, 1, 2, 3}));
  CHECK(flat.Best(G({1, 3, 5, 6, 7}), 2)->gpus == G({1, 3}));

  // PCIe tree of 4 GPUs: {0,1} and {2,3} share a PIX switch. From {1,2,3}, k=2 must take the PIX
  // pair {2,3} (12000) rather than {1,2} (PXB, 11000). With min-link PIX, {1,2} is not allowed and
  // k=3 is infeasible.
  SetSelector pcie(PcieTree(4, LinkClass::Node));
  auto p2 = pcie.Best(G({1, 2, 3}), 2);
  REQUIRE(p2);
  CHECK(p2->gpus == G({2, 3}));
  CHECK(p2->ring_mbps == 12000);
  SelectOptions pix;
  pix.min_link = LinkClass::Pix;
  CHECK_FALSE(pcie.Best(G({1, 2, 3}), 3, pix));
  CHECK_FALSE(pcie.MeetsMinLink(G({1, 2}), LinkClass::Pix));
  CHECK(pcie.MeetsMinLink(G({1}), LinkClass::Pix));  // A single GPU has no pair.
}

TEST_CASE("Nodes above 16 GPUs use the greedy search and stay feasible") {
  std::mt19937_64 rng(7);
  for (int n : {17, 24, 32, 64}) {
    PairMatrix p = RandomMatrix(rng, n);
    SetSelector sel(p);
    Oracle oracle(p);
    for (int q = 0; q < 20; ++q) {
      const std::vector<int> free = RandomFree(rng, n, n);
      const int k = 1 + int(rng() % std::min<size_t>(free.size(), 8));
      SelectOptions opt;
      opt.min_link = RandomMinLink(rng);
      auto got = sel.Best(GpuSet::Of(free), k, opt);
      if (!got) continue;  // Greedy may miss a feasible set under min-link; never an invalid one.
      CHECK(got->gpus.size() == k);
      CHECK(got->gpus.IsSubsetOf(GpuSet::Of(free)));
      CHECK(oracle.Meets(got->gpus.Indices(), opt.min_link));
      CHECK(got->ring_mbps == oracle.Ring(got->gpus.Indices()));  // Exact for k <= 10.
    }
  }
  // Two NVSwitch islands of 16 (32 GPUs): greedy keeps a set inside one island.
  PairMatrix p = AllSys(32);
  for (int a = 0; a < 32; ++a)
    for (int b = a + 1; b < 32; ++b)
      if (a / 16 == b / 16) SetNominal(p, a, b, {LinkClass::Nv, 12});
  SetSelector big(std::move(p));
  auto eight = big.Best(GpuSet::FirstN(32) - G({0, 1, 2}), 8);
  REQUIRE(eight);
  CHECK(eight->ring_mbps == 300000);
  CHECK(big.MeetsMinLink(eight->gpus, LinkClass::Nv));
}
