#include "bench/timed_driver.h"

#include <algorithm>

#include "bench/parallel_runs.h"
#include "bench/shared_metrics.h"

namespace topofit::bench {
namespace {

// A value's mean over [t0, end], weighted by the time it held (it starts at 100).
struct TimeWeighted {
  TimeWeighted(int64_t t0, int64_t end) : end(end), last_t(double(t0)), span(double(end - t0)) {}
  void Advance(int64_t t) {
    double until = double(std::min(t, end));
    if (until > last_t) weighted += value * (until - last_t);
    last_t = std::max(last_t, until);
  }
  double Mean() const { return span > 0 ? weighted / span : value; }
  int64_t end;
  double last_t, span, weighted = 0, value = 100;
};

}  // namespace

RunMetrics RunTimeOrdered(SimCluster& cluster, Policy& policy, const std::vector<PodSpec>& pods, uint64_t seed) {
  RunStart start = BeginRun(cluster, policy, seed);
  if (!start.ok()) return start.metrics;
  RunMetrics& m = start.metrics;
  RecordingReplayer replay(&cluster, &policy, &m);
  struct Event {
    int64_t time;
    int kind;  // 0 departure, 1 arrival: departures first at equal times.
    int pod;
  };
  std::vector<Event> events;
  for (int i = 0; i < int(pods.size()); ++i) {
    events.push_back({pods[i].creation_time, 1, i});
    if (pods[i].deletion_time) events.push_back({std::max(*pods[i].deletion_time, pods[i].creation_time), 0, i});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.kind < b.kind;
  });
  // A departure of a pod that had not arrived yet at equal times must follow its arrival.
  std::vector<Placement> placed(pods.size());
  std::vector<bool> arrived(pods.size(), false);
  const double cap = std::max<double>(1, double(cluster.gpu_capacity()));
  const int64_t t0 = events.empty() ? 0 : events.front().time;
  // The means run over the arrival span only: after the last arrival the cluster just drains.
  int64_t last_arrival = t0;
  for (const auto& p : pods) last_arrival = std::max(last_arrival, p.creation_time);
  TimeWeighted unalloc(t0, last_arrival), whole_free(t0, last_arrival);
  for (const auto& e : events) {
    unalloc.Advance(e.time);
    whole_free.Advance(e.time);
    if (e.kind == 1) {
      arrived[e.pod] = true;
      placed[e.pod] = replay.Arrive(pods[e.pod]);
      m.curve.push_back({double(e.time - t0) / 3600.0, 100.0 * double(cluster.gpus_allocated()) / cap});
    } else if (arrived[e.pod] && placed[e.pod].ok()) {
      replay.Depart(pods[e.pod], placed[e.pod]);
      placed[e.pod] = Placement{};
    }
    unalloc.value = 100.0 - 100.0 * double(cluster.gpus_allocated()) / cap;
    if (m.shared_cluster) {
      WholeGpus whole = CountWholeGpus(cluster);
      whole_free.value = 100.0 * double(whole.free) / double(std::max<int64_t>(1, whole.total));
    }
  }
  m.unallocated_pct_at_100 = unalloc.Mean();
  if (m.shared_cluster) m.whole_gpus_free_pct_at_100 = whole_free.Mean();
  m.failed_pods_at_100 = m.failed_pods;
  m.extender = policy.extender_stats();
  return std::move(m);  // m names start.metrics.
}

std::vector<RunMetrics> RunTimeOrderedAll(const SimCluster& cluster, const std::vector<PodSpec>& pods,
                                          const std::vector<const PolicyInfo*>& policies,
                                          const std::vector<uint64_t>& seeds, const PolicyOptions& options, int jobs,
                                          const std::function<void(int, int)>& on_progress) {
  auto run = [&](SimCluster& local, int r) {
    auto policy = policies[size_t(r) / seeds.size()]->make(options);
    return RunTimeOrdered(local, *policy, pods, seeds[size_t(r) % seeds.size()]);
  };
  return RunParallel(cluster, int(policies.size() * seeds.size()), jobs, run, on_progress);
}

}  // namespace topofit::bench
