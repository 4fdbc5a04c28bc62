#pragma once
// Time-ordered replay: pods arrive at their creation_time and, when placed, depart at their
// deletion_time (a departure at the same second as an arrival happens first, freeing its GPUs, as a
// real cluster would have by then). Pods without deletion_time stay. Failed pods are not retried -
// the metric is how many pods the policy could not place when they came.
//
// Curve: allocated % against hours since the first arrival, one point per arrival.
// RunMetrics::unallocated_pct_at_100 holds the time-weighted mean share of GPUs left unallocated
// from the first to the last arrival (there is no "100% arrival" moment in a time-ordered trace).

#include <cstdint>
#include <functional>
#include <vector>

#include "bench/policy.h"
#include "bench/run_metrics.h"
#include "bench/sim_cluster.h"

namespace topofit::bench {

// `pods` names must be unique. The cluster is Reset first.
RunMetrics RunTimeOrdered(SimCluster& cluster, Policy& policy, const std::vector<PodSpec>& pods, uint64_t seed);

// All policies x seeds (seeds only change tie-breaks here), on `jobs` threads.
std::vector<RunMetrics> RunTimeOrderedAll(const SimCluster& cluster, const std::vector<PodSpec>& pods,
                                          const std::vector<const PolicyInfo*>& policies,
                                          const std::vector<uint64_t>& seeds, const PolicyOptions& options, int jobs,
                                          const std::function<void(int, int)>& on_progress);

}  // namespace topofit::bench
