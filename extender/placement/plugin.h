#pragma once
// The plugin interfaces of the placement pipeline, shaped like kube-scheduler's framework: a filter
// plugin says whether a node can take the pod and why not; a score plugin rates a node that passed.
// Each idea is one small class (filter_plugins.h, score_plugins.h); Pipeline runs them in order.
//
// Plugins are stateless and const: everything about one pod's cycle is in CycleState, and every
// plugin sees a node through one NodeView taken once per cycle (the same free mask for all of them).
//
// What a plugin may read of a node (node_classes.h): filter plugins its GPU state (NodeKey: topology,
// usable, free, GPU model); score plugins that plus allocatable and used CPU and memory (ResourceKey), unless
// they say ReadsResources() == false. Never its name or anything else: the pipeline evaluates each
// distinct state once per cycle and gives every node of that state the same verdict and score. A
// plugin needing more extends those keys.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "extender/placement/product_shortfall.h"
#include "extender/cluster/node_state.h"
#include "extender/placement/placer.h"
#include "extender/cluster/pod_intent.h"
#include "extender/placement/workload_estimate.h"

namespace topofit::placement {

struct FragmentationCycle;  // score_plugins.h: FragmentationGradientScore's per-cycle tables.

enum class FilterCode : uint8_t {
  kPass,
  kFail,          // Resolvable: could fit if pods were evicted (kube-scheduler's FailedNodes).
  kUnresolvable,  // Can never fit (FailedAndUnresolvableNodes).
};

std::string_view ToString(FilterCode code);  // "pass", "fail", "unresolvable"

struct FilterStatus {
  FilterCode code = FilterCode::kPass;
  std::string reason;  // One short line for the pod's FailedScheduling event; "" when passing.

  static FilterStatus Pass() { return {}; }
  static FilterStatus Fail(std::string r) { return {FilterCode::kFail, std::move(r)}; }
  static FilterStatus Unresolvable(std::string r) { return {FilterCode::kUnresolvable, std::move(r)}; }
  bool passed() const { return code == FilterCode::kPass; }
};

struct NodeView {
  std::string_view name;
  const cluster::NodeState* node = nullptr;  // Never null inside plugins; has a topology when usable is non-empty.
  GpuSet free;                      // Read once per cycle.

  GpuSet usable() const { return node->usable(); }
  // Allocatable minus what the pods on the node request (may be negative when over-committed).
  int64_t free_cpu_milli() const { return node->allocatable().cpu_milli - node->used_cpu_milli(); }
  int64_t free_memory_bytes() const { return node->allocatable().memory_bytes - node->used_memory_bytes(); }
  const Topology* topology() const { return node->topology(); }
};

class CycleState {
 public:
  // reasons == false: plugins may leave FilterStatus::reason empty (prioritize does not show them).
  CycleState(const cluster::PodRequest& pod, const Placer& placer, bool reasons = true)
      : pod_(pod), placer_(placer), reasons_(reasons) {}
  const cluster::PodRequest& pod() const { return pod_; }
  const Placer& placer() const { return placer_; }
  bool wants_reasons() const { return reasons_; }

  // The set the pod would get on the node now (empty candidate for nodes without GPUs). Memoised
  // per cycle by (topology, free): in a 5,000-node request most nodes share a few states.
  Candidate CandidateFor(const NodeView& v) const { return CandidateFor(v, v.free); }
  Candidate CandidateFor(const NodeView& v, GpuSet free) const;
  // Placer::FullFuture for the node's usable GPUs, memoised likewise.
  uint64_t FullFuture(const NodeView& v) const;

  // Filled by PreScore: the best ring bandwidth the pod could get on any node of the request.
  uint32_t best_ring_mbps = 0;
  // The workload estimate at the start of the cycle (set by the pipeline; null: none known).
  std::shared_ptr<const WorkloadSnapshot> workload;
  // The cluster's free GPUs by model, counted over every node of the model (not only the nodes
  // scored) when the workload has model-bound shapes (set by the pipeline; null: not counted).
  std::shared_ptr<const cluster::FreeGpus> free_gpus;
  // Filled by FragmentationGradientScore::PreScore.
  std::shared_ptr<FragmentationCycle> fragmentation;

 private:
  struct MemoSlot {
    const Topology* topology = nullptr;  // nullptr: empty slot.
    uint64_t free = 0;
    bool full_future = false;            // Slot holds FullFuture(usable = free) in candidate.future_before.
    Candidate candidate;
  };
  MemoSlot* Slot(const Topology* topology, uint64_t free, bool full_future) const;

  const cluster::PodRequest& pod_;
  const Placer& placer_;
  const bool reasons_;
  static constexpr size_t kMemoSlots = 1024;    // 48 KiB, allocated on first use.
  static constexpr size_t kMemoMaxUsed = 768;   // Past this, go straight to the Placer.
  mutable std::vector<MemoSlot> memo_;
  mutable size_t memo_used_ = 0;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view Name() const = 0;
  virtual FilterStatus Filter(const CycleState& state, const NodeView& node) const = 0;
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string_view Name() const = 0;
  // Called once per cycle before Score, with the nodes about to be scored and their candidates -
  // one node per distinct GPU state: it must not read CPU or memory, nor depend on how many nodes
  // share a state.
  virtual void PreScore(CycleState& state, std::span<const NodeView> nodes,
                        std::span<const Candidate> candidates) const {}
  // In [0, 1]; higher is better. Called only for nodes that pass the filters.
  virtual double Score(const CycleState& state, const NodeView& node, const Candidate& candidate) const = 0;
  // Whether Score reads the node's CPU and memory. false: it reads only the GPU state, and is run
  // once per distinct GPU state (a busy cluster has a few hundred, against one per node for CPU).
  virtual bool ReadsResources() const { return true; }
};

}  // namespace topofit::placement
