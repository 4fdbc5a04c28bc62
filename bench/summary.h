#pragma once
// PolicySummary: one row of the result table - a policy's runs (seeds) folded into the reported metrics.
//
//   unallocated_gpu_pct         mean over runs of RunMetrics::unallocated_pct_at_100; _stddev its
//                               sample standard deviation (0 for one run).
//   failed_pods                 mean over runs of pods that failed before 100% arrival (paper protocol)
//                               or in the whole replay (time-ordered); failed_pods_total: whole run.
//   multi_gpu_best_set_pct      placed multi-GPU pods whose set's ring bandwidth equals the best any
//                               feasible node offered at that moment, % of placed multi-GPU pods.
//   multi_gpu_node_best_set_pct placed multi-GPU pods whose set's ring equals the best of the node they
//                               were placed on at that moment, % of placed multi-GPU pods.
//   multi_gpu_mean_bandwidth_gbps  mean predicted ring bandwidth of placed multi-GPU pods' sets.
//   decision_us_p50/_p99        percentiles of per-pod decision time (filters + choice), all runs;
//                               decision_cpu_us_*: the same in the thread's CPU time; no_gpu_*: pods
//                               without GPUs only.
//   unallocated_at_100_by_node  paper protocol: mean over runs of RunMetrics::unallocated_at_100 (free
//                               GPUs after the arrival crossing 100%, by node class and free count);
//   failed_at_100_by_request    mean over runs of RunMetrics::failed_at_100 (pods by request).
//   curve                       allocated % averaged over runs on a 1%-step grid of arrived request.

#include <map>
#include <string>
#include <vector>

#include "bench/run_metrics.h"

namespace topofit::bench {

struct PolicySummary {
  std::string policy;
  int runs = 0;
  double unallocated_gpu_pct = 0;
  double unallocated_gpu_pct_stddev = 0;
  double failed_pods = 0;
  double failed_pods_total = 0;
  int64_t multi_gpu_pods = 0;
  double multi_gpu_best_set_pct = 0;
  double multi_gpu_node_best_set_pct = 0;
  double multi_gpu_mean_bandwidth_gbps = 0;
  double multi_gpu_mean_best_gbps = 0;  // Mean of the cluster-wide best, for context.
  double decision_us_p50 = 0;
  double decision_us_p99 = 0;
  double decision_cpu_us_p50 = 0, decision_cpu_us_p99 = 0;  // The thread's CPU time instead of wall.
  // Pods without GPUs only (0 when there are none): wall and CPU time.
  double no_gpu_decision_us_p50 = 0, no_gpu_decision_us_p99 = 0;
  double no_gpu_decision_cpu_us_p50 = 0, no_gpu_decision_cpu_us_p99 = 0;
  // Extender policies: % of their prioritized decisions kube-scheduler placed on a node below the
  // extender's best score (Policy::extender_stats); -1 for other policies.
  double kube_override_pct = -1;
  // Extender policies, summed over runs: GPU pods bound on DRA nodes, and those whose allocated GPUs
  // were not the predicted set (ExtenderStats).
  int64_t dra_binds = 0;
  int64_t dra_mispredicted = 0;
  std::vector<double> unallocated_gpu_pct_runs;  // Each run's, in run order (seeds), for paired comparisons.
  std::map<std::string, double> unallocated_at_100_by_node;
  std::map<std::string, double> failed_at_100_by_request;
  std::vector<CurvePoint> curve;        // Grid x = 0, 1, ..., max arrived %.
  std::vector<MultiGpuPlacement> multi; // All runs' multi-GPU placements (for the plots).
  std::string error;
};

// Groups `runs` by policy (first-seen order) and summarises each group. `grid_max` bounds the curve.
std::vector<PolicySummary> Summarize(const std::vector<RunMetrics>& runs, double grid_max = 130);

// Percentile (0..100) by nearest rank; 0 for an empty sample.
double Percentile(std::vector<float> sample, double p);

}  // namespace topofit::bench
