#pragma once
// Policy: one way of placing a pod - which node, and which GPUs on it. Every policy the bench compares
// (topofit, kube-scheduler's scoring with the device plugin's set choice, the openb paper's baselines)
// is a small class behind this interface, so the drivers treat them alike.
//
// Contract: the driver has already applied kube-scheduler's own filters (SimCluster::Fits) and passes
// the feasible nodes, never empty. Place returns the node (an element of `feasible`) and exactly
// pod.gpus GPUs from that node's free set, or node -1 when the policy rejects every node (only a
// policy with a filter of its own, such as topofit's, may). The driver then binds the placement in the
// SimCluster and calls Bound; a departing pod is released there first and then reported by Released.
// One instance serves one run at a time (not thread-safe); Reset starts a new run. Drivers give every
// arrival a unique pod name (a pod drawn twice is two pods), which policies may use as its uid.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/sim_cluster.h"
#include "bench/workload.h"
#include "extender/placement/pipeline_config.h"
#include "topology/gpu_set.h"

namespace topofit::bench {

struct Placement {
  int node = -1;
  GpuSet gpus;
  bool ok() const { return node >= 0; }
};

// For a policy that runs an extender under kube-scheduler's scoring: how many of its decisions went to a
// node other than one the extender ranked best (kube-scheduler's in-tree scores outweighed it).
struct ExtenderStats {
  int64_t decisions = 0;   // GPU pods placed after a prioritize.
  int64_t overridden = 0;  // Of those, placed on a node below the extender's best score.
  // GPU pods bound on DRA-backed nodes (dra_nodes.h), and of those the ones whose GPUs from the
  // allocator (DraFirstFit) were not the set the extender predicted (ViewDraBind): 0 unless the
  // prediction is wrong.
  int64_t dra_binds = 0;
  int64_t dra_mispredicted = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Called with the cluster empty, before a run; `seed` drives any random choice (tie-breaks).
  virtual Status Reset(const SimCluster& cluster, uint64_t seed) = 0;
  virtual Placement Place(const SimCluster& cluster, const PodSpec& pod, std::span<const int> feasible) = 0;
  virtual void Bound(const SimCluster& cluster, const PodSpec& pod, const Placement& placement) {}
  virtual void Released(const SimCluster& cluster, const PodSpec& pod, const Placement& placement) {}
  // Since Reset; zero for policies without an extender.
  virtual ExtenderStats extender_stats() const { return {}; }
};

// Options some policies read; the CLI fills them.
struct PolicyOptions {
  std::string via_http;          // topofit only: base URL of a running `topofit serve`; "" = in-process.
  int extender_weight = 5;       // topofit only: the extender's weight in KubeSchedulerConfiguration.
  // topofit only: kube-scheduler's in-tree NodeResourcesFit strategy in the topofit-scheduler profile that
  // the extender score is added to: "least" (the default, LeastAllocated) or "most" (MostAllocated over
  // cpu, memory and nvidia.com/gpu), each plus BalancedAllocation.
  std::string in_tree = "least";
  placement::PipelineConfig pipeline;  // topofit only: score weights and request mix, as `serve --config`.
};

struct PolicyInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Policy>(const PolicyOptions&)> make;
};

// Every policy, in the order reports list them.
const std::vector<PolicyInfo>& AllPolicies();
// Splits "a,b,c" and checks each name; "all" or "" gives every policy.
Result<std::vector<const PolicyInfo*>> SelectPolicies(const std::string& csv);

}  // namespace topofit::bench
