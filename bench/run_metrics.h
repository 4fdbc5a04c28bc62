#pragma once
// RunMetrics: what one replay (one policy, one seed or one trace) measured, and RecordingReplayer, the
// single place where a pod is filtered, placed, bound and measured - shared by both drivers so the
// paper protocol and the time-ordered replay count the same way.
//
// Per arrival: kube-scheduler's filters, the policy's choice (the decision time covers both, in
// microseconds, wall and the thread's CPU time: on a loaded machine the wall time's tail is mostly
// waiting for a core), the bind. For every placed multi-GPU pod: the predicted ring bandwidth of its set
// (SetSelector::RingMbps) and whether it equals the best ring any feasible node offered for that size
// at that moment (SetSelector::BestRingMbps over every node passing kube-scheduler's filters), and the
// best ring of the node it was placed on.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/policy.h"
#include "bench/sim_cluster.h"

namespace topofit::bench {

struct CurvePoint {
  double x = 0;                // Paper protocol: arrived GPU request, % of capacity. Timed: hours.
  double allocated_pct = 0;    // GPUs allocated, % of capacity.
};

struct MultiGpuPlacement {
  int gpus = 0;
  double bandwidth_gbps = 0;
  double best_gbps = 0;        // Best available in the cluster at that moment.
  double node_best_gbps = 0;   // Best available on the node it was placed on, at that moment.
  uint8_t kind = 0;            // DeviceKind (shared_metrics.h) of the node: whole GPUs, replicas, MIG.
  bool packed = false;         // The pod allowed replicas of one GPU (topofit.io/replica-placement).
  int extra_replicas = 0;      // ExtraReplicas of its set: > 0 when it got two replicas of one GPU.
};

struct RunMetrics {
  std::string policy;
  uint64_t seed = 0;
  int64_t capacity = 0;
  int64_t arrivals = 0;
  int64_t failed_pods = 0;               // Whole run.
  int64_t failed_gpu_pods = 0;
  int64_t failed_pods_at_100 = 0;        // Paper protocol: before the arrived request reached 100%.
  double unallocated_pct_at_100 = 0;     // Paper: at 100% arrival; timed: time-weighted mean.
  // Paper protocol, where the gap is: the free GPUs after the arrival that crossed 100%, by node class
  // and free count ("V100M32 x8, 2 free" -> GPUs), and the pods that failed before it by request
  // ("8 GPUs", "1 GPU on V100M16|V100M32" -> pods).
  std::map<std::string, int64_t> unallocated_at_100;
  std::map<std::string, int64_t> failed_at_100;
  std::vector<CurvePoint> curve;         // One point per arrival.
  std::vector<MultiGpuPlacement> multi;  // Placed multi-GPU pods.
  std::vector<float> decision_us;        // Wall time per arrival.
  std::vector<float> decision_cpu_us;    // The replaying thread's CPU time per arrival (not waiting for a core).
  std::vector<float> no_gpu_decision_us;      // Wall time, pods without GPUs only.
  std::vector<float> no_gpu_decision_cpu_us;  // CPU time, pods without GPUs only.
  ExtenderStats extender;                // Policy::extender_stats() at the end of the run.
  // Clusters with shared GPUs (shared_metrics.h): placed pods, not packed, with two or more replicas of
  // one GPU; physical GPUs with every device free, % of them, at 100% arrival (paper protocol) or the
  // time-weighted mean over the arrivals (time-ordered, as unallocated_pct_at_100); -1 when the cluster
  // shares no GPU.
  bool shared_cluster = false;
  int64_t doubled_pods = 0;
  double whole_gpus_free_pct_at_100 = -1;
  std::string error;                     // Non-empty when the run could not start (policy Reset failed).
};

class RecordingReplayer {
 public:
  RecordingReplayer(SimCluster* cluster, Policy* policy, RunMetrics* out);
  // Places `pod` (its name unique in the run). Returns the placement (node -1 when it failed).
  Placement Arrive(const PodSpec& pod);
  void Depart(const PodSpec& pod, const Placement& placement);

 private:
  uint32_t BestRingOn(const PodSpec& pod, int node);  // Best ring of pod.gpus in the node's free GPUs.
  uint32_t BestRingAnywhere(const PodSpec& pod, const std::vector<int>& feasible);
  SimCluster* cluster_;
  Policy* policy_;
  RunMetrics* out_;
  std::vector<int> feasible_;  // Every node passing kube-scheduler's filters (for the best-set metric).
  std::vector<int> found_;     // Those kube-scheduler's search finds (percentageOfNodesToScore).
  std::unordered_map<uint64_t, uint32_t> best_ring_memo_;  // (type, free mask, k) -> ring
};

}  // namespace topofit::bench
