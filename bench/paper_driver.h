#pragma once
// The openb paper's replay protocol (traces/openb/README.md; Weng et al., ATC'23): timestamps ignored,
// nothing departs, pods drawn uniformly at random with replacement (a seeded shuffle) until the total
// GPU request that arrived reaches `stop_ratio` (1.3) x the cluster's GPU capacity. Every policy sees
// the same pod sequence for a given seed.
//
// Headline: the share of the cluster's GPUs left unallocated when the arrived GPU request equals 100%
// of capacity, linearly interpolated between the two arrivals around 100%. The allocation curve is
// kept whole (one point per arrival).
//
// Runs (seed x policy) are independent and run on `jobs` threads, each with its own SimCluster copy
// and policy instance.

#include <cstdint>
#include <functional>
#include <vector>

#include "bench/policy.h"
#include "bench/run_metrics.h"
#include "bench/sim_cluster.h"
#include "bench/workload.h"

namespace topofit::bench {

struct PaperOptions {
  std::vector<uint64_t> seeds{42, 43, 44, 45, 46, 47, 48, 49, 50, 51};
  double stop_ratio = 1.3;
  int jobs = 0;  // 0: hardware concurrency.
  PolicyOptions policy;
  // Called after each finished run with (done, total); from worker threads, serialised.
  std::function<void(int, int)> on_progress;
};

// RunMetrics::unallocated_at_100's key for a node ("V100M32 x8, 2 free": model, GPUs, GPUs free now)
// and failed_at_100's for a pod ("4 GPUs", "1 GPU on V100M16|V100M32": its gpu_spec models).
std::string NodeClass(const SimCluster& cluster, const SimNode& node);
std::string RequestClass(const PodSpec& pod);

// The arrival sequence for one seed: indices into `pods`.
std::vector<int> PaperSequence(const std::vector<PodSpec>& pods, int64_t capacity, double stop_ratio, uint64_t seed);

// Replays one sequence with one policy (the cluster is Reset first).
RunMetrics RunPaperOnce(SimCluster& cluster, Policy& policy, const std::vector<PodSpec>& pods,
                        const std::vector<int>& sequence, uint64_t seed);

// All seeds x policies; results ordered by policy, then seed.
std::vector<RunMetrics> RunPaperProtocol(const SimCluster& cluster, const std::vector<PodSpec>& pods,
                                         const std::vector<const PolicyInfo*>& policies, const PaperOptions& options);

}  // namespace topofit::bench
