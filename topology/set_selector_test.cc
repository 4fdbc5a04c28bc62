// SetSelector against an independent brute-force oracle (hand-checked cases: set_selector_cases_test.cc).
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

TEST_CASE("set_selector: SetSelector matches the brute-force oracle on thousands of topologies") {
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

namespace {
GpuSet G(std::initializer_list<int> l) { return GpuSet::Of(std::vector<int>(l)); }
}  // namespace

TEST_CASE("set_selector: Nodes above 16 GPUs use the greedy search and stay feasible") {
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
