#include "bench/paper_driver.h"

#include <algorithm>
#include <random>

#include "bench/parallel_runs.h"
#include "bench/shared_metrics.h"

namespace topofit::bench {

std::string NodeClass(const SimCluster& cluster, const SimNode& node) {
  std::string model = node.model_id >= 0 ? cluster.models()[node.model_id] : "no model";
  return model + " x" + std::to_string(node.all.size()) + ", " + std::to_string(node.free_gpus()) + " free";
}

std::string RequestClass(const PodSpec& pod) {
  std::string s = std::to_string(pod.gpus) + (pod.gpus == 1 ? " GPU" : " GPUs");
  for (size_t i = 0; i < pod.gpu_models.size(); ++i) s += (i == 0 ? " on " : "|") + pod.gpu_models[i];
  return s;
}

std::vector<int> PaperSequence(const std::vector<PodSpec>& pods, int64_t capacity, double stop_ratio, uint64_t seed) {
  std::vector<int> seq;
  if (pods.empty()) return seq;
  bool any_gpu = std::any_of(pods.begin(), pods.end(), [](const PodSpec& p) { return p.gpus > 0; });
  if (!any_gpu || capacity <= 0) return seq;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, int(pods.size()) - 1);
  const double stop = stop_ratio * double(capacity);
  double arrived = 0;
  while (arrived < stop) {
    int i = pick(rng);
    seq.push_back(i);
    arrived += pods[i].gpus;
  }
  return seq;
}

RunMetrics RunPaperOnce(SimCluster& cluster, Policy& policy, const std::vector<PodSpec>& pods,
                        const std::vector<int>& sequence, uint64_t seed) {
  RunStart start = BeginRun(cluster, policy, seed);
  if (!start.ok()) return start.metrics;
  RunMetrics& m = start.metrics;
  RecordingReplayer replay(&cluster, &policy, &m);
  const double cap = double(cluster.gpu_capacity());
  m.curve.reserve(sequence.size());
  int64_t arrived = 0;
  bool crossed = false;
  double prev_x = 0, prev_unalloc = 100;
  PodSpec pod;
  for (size_t n = 0; n < sequence.size(); ++n) {
    pod = pods[sequence[n]];
    pod.name += "#" + std::to_string(n);  // A pod drawn twice is two pods.
    Placement p = replay.Arrive(pod);
    if (!p.ok() && !crossed) {
      ++m.failed_pods_at_100;
      ++m.failed_at_100[RequestClass(pod)];
    }
    arrived += pod.gpus;
    double x = 100.0 * double(arrived) / cap;
    double alloc = 100.0 * double(cluster.gpus_allocated()) / cap;
    m.curve.push_back({x, alloc});
    if (!crossed && x >= 100.0) {
      crossed = true;
      for (const SimNode& node : cluster.nodes()) {
        if (node.free_gpus() > 0) m.unallocated_at_100[NodeClass(cluster, node)] += node.free_gpus();
      }
      if (m.shared_cluster) {
        WholeGpus whole = CountWholeGpus(cluster);
        m.whole_gpus_free_pct_at_100 = 100.0 * double(whole.free) / double(std::max<int64_t>(1, whole.total));
      }
      double unalloc = 100.0 - alloc;
      // Interpolate to exactly 100% arrival between this arrival and the previous one.
      m.unallocated_pct_at_100 = x > prev_x ? prev_unalloc + (unalloc - prev_unalloc) * (100.0 - prev_x) / (x - prev_x)
                                            : unalloc;
    }
    prev_x = x;
    prev_unalloc = 100.0 - alloc;
  }
  m.extender = policy.extender_stats();
  return std::move(m);  // m names start.metrics.
}

std::vector<RunMetrics> RunPaperProtocol(const SimCluster& cluster, const std::vector<PodSpec>& pods,
                                         const std::vector<const PolicyInfo*>& policies, const PaperOptions& options) {
  const int runs = int(policies.size() * options.seeds.size());
  std::vector<std::vector<int>> sequences;
  for (uint64_t seed : options.seeds) {
    sequences.push_back(PaperSequence(pods, cluster.gpu_capacity(), options.stop_ratio, seed));
  }
  auto run = [&](SimCluster& local, int r) {
    size_t pi = size_t(r) / options.seeds.size(), si = size_t(r) % options.seeds.size();
    auto policy = policies[pi]->make(options.policy);
    return RunPaperOnce(local, *policy, pods, sequences[si], options.seeds[si]);
  };
  return RunParallel(cluster, runs, options.jobs, run, options.on_progress);
}

}  // namespace topofit::bench
