#pragma once
// WorkloadEstimate: a running, decaying estimate of the GPU pods the cluster is asked to place - the
// distribution the FragmentationGradient score plugin (score_plugins.h) and the bench's FGD policy
// take their expectation over. It learns only from pods as they arrive (serve: the filter and
// prioritize verbs, once per pod uid; the bench: each arrival as kube-scheduler would send it),
// never from what is to come.
//
// A pod is reduced to its shape: GPU count, CPU and memory request, the GPU models it may use
// (PodRequest::gpu_products: nodeSelector / required node affinity on nvidia.com/gpu.product, the
// bench's gpu_spec; empty = any) and its topology policy. CPU and memory are bucketed in half-octave
// steps (a shape holds the weighted mean of its bucket), so similar pods share one shape.
//
// Decay: each observation weighs 2^(1/half_life) times the one before it, so a pod seen half_life
// pods ago counts half as much as the newest. At most max_shapes shapes are kept; a new shape
// beyond that replaces the one of least weight. Pods without GPUs are not observed (they use no GPU,
// so no free GPU is lost to them); observing a uid seen among the last `dedup` uids does nothing
// (kube-scheduler retries a pod's filter and prioritize).
//
// Snapshot() is the estimate at one moment: shapes with weights summing to 1, in descending weight.
// Thread-safe: Observe takes a mutex and publishes a new snapshot; Snapshot copies a shared_ptr.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/decaying_tally.h"
#include "extender/cluster/pod_intent.h"

namespace topofit::placement {

struct PodShape {
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<std::string> products;   // Sorted; empty = any GPU model.
  std::vector<uint32_t> product_ids;   // The same, as GpuProductId (node_state.h).
  cluster::TopologyPolicy policy = cluster::TopologyPolicy::kBestEffort;
  double weight = 0;                   // In a snapshot: share of the estimate, summing to 1.
};

struct WorkloadSnapshot {
  std::vector<PodShape> shapes;  // Descending weight.
  uint64_t observed = 0;         // GPU pods observed since start.
  double half_life = 0;
};

struct WorkloadOptions {
  double half_life = 2000;  // Pods (see the class comment; docs/placement.md says how it was chosen).
  size_t max_shapes = 48;
  size_t dedup = 4096;
};

// One line for explain and events: "412 GPU pods seen (half-life 2000): 1 GPU 61%, 1 GPU on
// V100M16|V100M32 20%, 8 GPUs 96 cores 9%, ... (+N more shapes)". CPU and memory are named only for
// shapes whose request is at least 16 cores or 128 GiB; at most `top` shapes are listed.
std::string DescribeWorkload(const WorkloadSnapshot& snapshot, size_t top = 5);

class WorkloadEstimate {
 public:
  explicit WorkloadEstimate(WorkloadOptions options = {});

  // Adds one arrival. Pods with gpus <= 0 or an error, and recently seen uids, are ignored; returns
  // whether the pod was counted.
  bool Observe(const cluster::PodRequest& pod);
  std::shared_ptr<const WorkloadSnapshot> Snapshot() const;
  // The estimate as it would be once `pod` is observed, without observing it (explain: the scores
  // prioritize would give this pod).
  std::shared_ptr<const WorkloadSnapshot> SnapshotWith(const cluster::PodRequest& pod) const;
  void Reset();

 private:
  struct Entry {
    PodShape shape;   // cpu/memory: weighted sums (divided by weight when published).
    int cpu_bucket = 0, mem_bucket = 0;
  };
  void AddLocked(const cluster::PodRequest& pod, std::vector<Entry>& entries, DecayingUnit& unit, uint64_t& observed) const;
  std::shared_ptr<const WorkloadSnapshot> Publish(const std::vector<Entry>& entries, uint64_t observed) const;
  void PublishLocked();

  const WorkloadOptions options_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  DecayingUnit unit_;
  uint64_t observed_ = 0;
  RecentKeys recent_;
  std::shared_ptr<const WorkloadSnapshot> snapshot_;
};

}  // namespace topofit::placement
