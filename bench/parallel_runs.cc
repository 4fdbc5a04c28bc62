#include "bench/parallel_runs.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace topofit::bench {

RunStart BeginRun(SimCluster& cluster, Policy& policy, uint64_t seed) {
  RunStart start;
  start.metrics.seed = seed;
  cluster.Reset();
  if (auto st = policy.Reset(cluster, seed); !st) {
    start.metrics.policy = policy.name();
    start.metrics.error = st.error();
  }
  return start;
}

std::vector<RunMetrics> RunParallel(const SimCluster& cluster, int runs, int jobs,
                                    const std::function<RunMetrics(SimCluster& cluster, int r)>& run,
                                    const std::function<void(int, int)>& on_progress) {
  std::vector<RunMetrics> results(std::max(0, runs));
  std::atomic<int> next{0};
  std::mutex mu;
  int done = 0;
  auto worker = [&] {
    auto local = cluster.Clone();
    for (int r; (r = next.fetch_add(1)) < runs;) {
      results[r] = run(*local, r);
      if (on_progress) {
        std::lock_guard<std::mutex> lock(mu);
        on_progress(++done, runs);
      }
    }
  };
  if (jobs <= 0) jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::max(1, std::min(jobs, runs));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace topofit::bench
