// SetSelector microbenchmarks: table build, warm (memoised) and cold best-set queries.
//
// Topologies are built here (topology/set_selector_testdata.h): DGX-1 hybrid cube mesh (NV2 50000,
// NV1 25000, SYS 6000 MB/s), two DGX-1 meshes joined by NV1 (16 GPUs), two 8-GPU NVSwitch islands
// (16 GPUs; every set inside an island ties, the worst case for the future-score tie-break).
// Run: build/topology/set_selector_perftest --benchmark_repetitions=10 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <memory>

#include "topology/ring_table.h"
#include "topology/set_selector.h"
#include "topology/set_selector_testdata.h"

namespace topofit {
namespace {

using testing::Dgx1;
using testing::HybridMesh16;
using testing::TwoIslands16;

PairMatrix Shape(int id) {
  switch (id) {
    case 0: return Dgx1();
    case 1: return HybridMesh16();
    default: return TwoIslands16();
  }
}

// Whole selector construction: ring DP, min-class table, BestSub for the default sizes, the
// default-mix future table. The counter reports the bytes the exact tables hold afterwards.
void BM_SelectorBuild(benchmark::State& state) {
  const PairMatrix p = Shape(int(state.range(0)));
  for (auto _ : state) {
    SetSelector sel(p);
    benchmark::DoNotOptimize(&sel);
  }
  RingTables tables(p);
  for (const auto& e : RequestMix{}.entries) tables.BestSub(e.size);
  state.counters["table_bytes"] = double(tables.MemoryBytes() + (size_t{8} << p.n));  // + future
  state.SetLabel(std::to_string(p.n) + " GPUs");
}
BENCHMARK(BM_SelectorBuild)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// RingTables alone (ring + min-class), without any BestSub size.
void BM_RingTablesBuild(benchmark::State& state) {
  const PairMatrix p = Shape(int(state.range(0)));
  for (auto _ : state) {
    RingTables t(p);
    benchmark::DoNotOptimize(t.Ring(t.full_mask()));
  }
  state.SetLabel(std::to_string(p.n) + " GPUs");
}
BENCHMARK(BM_RingTablesBuild)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Warm: the extender asks the same (free, k, min_link) again - a cache hit.
void BM_Dgx1WarmQuery(benchmark::State& state) {
  SetSelector sel(Dgx1());
  const GpuSet free = GpuSet::FirstN(8) - GpuSet::Of({1, 6});
  const int k = int(state.range(0));
  benchmark::DoNotOptimize(sel.Best(free, k));
  for (auto _ : state) benchmark::DoNotOptimize(sel.Best(free, k));
}
BENCHMARK(BM_Dgx1WarmQuery)->Arg(2)->Arg(4);

// Cold on 8 GPUs: the cache bypassed, full enumeration.
void BM_Dgx1ColdQuery(benchmark::State& state) {
  SetSelector sel(Dgx1());
  SelectOptions opt;
  opt.bypass_cache = true;
  const int k = int(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(sel.Best(GpuSet::FirstN(8), k, opt));
}
BENCHMARK(BM_Dgx1ColdQuery)->Arg(2)->Arg(4);

// Cold on an idle 16-GPU node (the largest enumeration: C(16, 8) = 12870 sets), tables built,
// cache bypassed. Args: shape (1 = hybrid mesh, 2 = NVSwitch islands), k.
void BM_Cold16Query(benchmark::State& state) {
  SetSelector sel(Shape(int(state.range(0))));
  SelectOptions opt;
  opt.bypass_cache = true;
  const int k = int(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(sel.Best(GpuSet::FirstN(16), k, opt));
}
BENCHMARK(BM_Cold16Query)->Args({1, 4})->Args({1, 8})->Args({2, 4})->Args({2, 8})
    ->Unit(benchmark::kMicrosecond);

// Cold on 16 GPUs with a custom mix (never cached): the future score is assembled per tied set.
void BM_Cold16CustomMix(benchmark::State& state) {
  SetSelector sel(Shape(int(state.range(0))));
  RequestMix mix;
  mix.entries = {{2, 3}, {4, 2}, {8, 1}, {16, 1}};
  SelectOptions opt;
  opt.mix = &mix;
  for (auto _ : state) benchmark::DoNotOptimize(sel.Best(GpuSet::FirstN(16), 8, opt));
}
BENCHMARK(BM_Cold16CustomMix)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// Greedy path (32 GPUs, two 16-GPU NVSwitch islands), for scale only: not exact, not cached.
void BM_Greedy32Query(benchmark::State& state) {
  PairMatrix p = testing::AllSys(32);
  for (int a = 0; a < 32; ++a)
    for (int b = a + 1; b < 32; ++b)
      if (a / 16 == b / 16) testing::SetNominal(p, a, b, {LinkClass::Nv, 12});
  SetSelector sel(std::move(p));
  for (auto _ : state) benchmark::DoNotOptimize(sel.Best(GpuSet::FirstN(32), int(state.range(0))));
}
BENCHMARK(BM_Greedy32Query)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topofit
