#pragma once
// What every bench protocol does around its per-pod loop: start a run from a clean cluster and a
// freshly reset policy, and spread the (policy, seed) runs over threads, each on its own cluster.

#include <functional>
#include <vector>

#include "bench/run_metrics.h"

namespace topofit::bench {

// Resets the cluster, then the policy for `seed`. The result carries the seed, and the policy's name
// and the error when it cannot start (the caller then returns it as is: ok() is false).
struct RunStart {
  RunMetrics metrics;
  bool ok() const { return metrics.error.empty(); }
};
RunStart BeginRun(SimCluster& cluster, Policy& policy, uint64_t seed);

// Calls run(cluster, r) for r in [0, runs) on `jobs` threads (<= 0: one per core), each thread with
// its own clone of `cluster`; returns the results in r order. on_progress(done, runs), if set, is
// called under a lock after each run.
std::vector<RunMetrics> RunParallel(const SimCluster& cluster, int runs, int jobs,
                                    const std::function<RunMetrics(SimCluster& cluster, int r)>& run,
                                    const std::function<void(int, int)>& on_progress);

}  // namespace topofit::bench
