// SetSelector on machines whose best placements can be reasoned out by hand, and under concurrency.
// Bandwidths (set_selector_testdata.h): NV2 50000, NV1 25000, NV12 300000, PIX 12000, PXB 11000,
// SYS 6000 MB/s. Default mix: sizes 1, 2, 4, 8 with weight 1, each worth up to 1,000,000.

#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "topology/set_selector.h"
#include "topology/set_selector_testdata.h"

using namespace topofit;
using namespace topofit::testing;

namespace {
GpuSet G(std::initializer_list<int> l) { return GpuSet::Of(std::vector<int>(l)); }
}  // namespace

TEST_CASE("set_selector: DGX-1 hybrid cube mesh: hand-checked choices") {
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

TEST_CASE("set_selector: NVSwitch islands, PCIe trees and all-equal fabrics") {
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

TEST_CASE("set_selector: Concurrent queries agree with sequential ones (shared lock-free cache)") {
  SetSelector shared(HybridMesh16());
  SetSelector reference(HybridMesh16());
  std::mt19937_64 rng(99);
  struct Query {
    GpuSet free;
    int k;
  };
  std::vector<Query> queries;
  for (int i = 0; i < 300; ++i) queries.push_back({GpuSet(rng() & 0xffff), 1 + int(rng() % 8)});
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = t; i < queries.size() + t; ++i) {
          const Query& q = queries[i % queries.size()];
          auto a = shared.Best(q.free, q.k);
          SelectOptions bypass;
          bypass.bypass_cache = true;
          auto b = shared.Best(q.free, q.k, bypass);
          if (a.has_value() != b.has_value() || (a && a->gpus != b->gpus)) ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == 0);
  for (const Query& q : queries) {
    auto a = shared.Best(q.free, q.k), b = reference.Best(q.free, q.k);
    REQUIRE(a.has_value() == b.has_value());
    if (a) CHECK((a->gpus == b->gpus && a->ring_mbps == b->ring_mbps && a->future == b->future));
  }
}

TEST_CASE("set_selector: degenerate nodes and out-of-range bits") {
  SetSelector empty{PairMatrix(0)};
  CHECK(empty.gpu_count() == 0);
  CHECK_FALSE(empty.Best(GpuSet::FirstN(4), 1));
  CHECK(empty.FutureScore(GpuSet(), RequestMix{}) == 0);

  SetSelector one{PairMatrix(1)};
  auto only = one.Best(GpuSet::FirstN(64), 1);  // Bits above GPU 0 do not exist and are ignored.
  REQUIRE(only);
  CHECK(only->gpus == GpuSet::FirstN(1));
  CHECK(only->ring_mbps == 0);
  CHECK(only->future == 0);  // Nothing stays free.
  CHECK(one.FutureScore(GpuSet::FirstN(1), RequestMix{}) == 1'000'000);  // Size 1 fits; 2+ do not.

  SetSelector dgx(Dgx1());
  CHECK(dgx.Best(GpuSet(0xff00), 1) == std::nullopt);  // Only non-existent GPUs "free".
  CHECK(dgx.RingMbps(G({0, 3, 9})) == 50000);           // GPU 9 does not exist: ring of {0,3}.
}
