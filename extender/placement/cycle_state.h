#pragma once
// CycleState and NodeView: what the plugins of one pod's cycle share (plugin.h).
//
// NodeView is a node as every plugin of the cycle sees it: its state and the free GPUs read once for
// the cycle. CycleState holds the pod, the Placer, and what PreScore computes for the whole cycle; the
// set the pod would get on a node (ChoiceFor) is memoised per cycle by (topology, free), so the
// plugins of a 5,000-node request ask the Placer once per distinct node state. Not thread-safe: one
// cycle, one thread.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "extender/cluster/free_gpus.h"
#include "extender/cluster/node_state.h"
#include "extender/cluster/pod_intent.h"
#include "extender/placement/placer.h"
#include "extender/placement/workload_estimate.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::placement {

struct FragmentationCycle;  // score_plugins.h: FragmentationGradientScore's per-cycle tables.

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

// What decides, besides topology and free GPUs, which set the pod gets on the node: the DRA
// allocator's order (ResolvedTopology::first_fit_hash), or for a pod with a DraPodAsk its ask on that
// node (DraNodeAsk::hash; 0 where it has none). 0 on device-plugin nodes.
inline uint64_t SetOrderOf(const NodeView& v, const cluster::DraPodAsk* ask) {
  if (!ask) return v.node->spec().first_fit_hash;
  const cluster::DraNodeAsk* a = ask->Find(v.name);
  return a ? a->hash : 0;
}

class CycleState {
 public:
  // reasons == false: plugins may leave FilterStatus::reason empty (prioritize does not show them).
  CycleState(const cluster::PodRequest& pod, const Placer& placer, bool reasons = true)
      : pod_(pod), placer_(placer), reasons_(reasons) {}
  const cluster::PodRequest& pod() const { return pod_; }
  const Placer& placer() const { return placer_; }
  bool wants_reasons() const { return reasons_; }

  // The set the pod would get on the node now (empty candidate for nodes without GPUs): on a DRA
  // node the allocator's first fit (Placer::FirstFit) - for a pod with a DraPodAsk (its own claims)
  // the set PredictDraAsk gives, and nothing on nodes it has no ask for - elsewhere the Placer's choice; on a node that
  // shares its GPUs the placer chooses among SharedDevices::Offerable(free) only. Memoised per cycle
  // by (topology, free, DRA order): in a 5,000-node request most nodes share a few states.
  PlacerChoice ChoiceFor(const NodeView& v) const { return ChoiceFor(v, v.free); }
  PlacerChoice ChoiceFor(const NodeView& v, GpuSet free) const;
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
  // The exchange rate between ring bandwidth and fragmentation (PipelineConfig::interconnect_rate),
  // set by the pipeline where FragmentationGradient runs; +inf: the lexicographic rule (best set of
  // the cluster first).
  double interconnect_rate = std::numeric_limits<double>::infinity();

 private:
  struct MemoSlot {
    const Topology* topology = nullptr;  // nullptr: empty slot.
    uint64_t free = 0;
    uint64_t order = 0;                  // ResolvedTopology::first_fit_hash, or DraNodeAsk::hash; 0 off DRA nodes.
    bool full_future = false;            // Slot holds FullFuture(usable = free) in candidate.future_before.
    PlacerChoice candidate;
  };
  MemoSlot* Slot(const Topology* topology, uint64_t free, uint64_t order, bool full_future) const;
  PlacerChoice Compute(const NodeView& v, GpuSet free) const;

  const cluster::PodRequest& pod_;
  const Placer& placer_;
  const bool reasons_;
  static constexpr size_t kMemoSlots = 1024;    // 48 KiB, allocated on first use.
  static constexpr size_t kMemoMaxUsed = 768;   // Past this, go straight to the Placer.
  mutable std::vector<MemoSlot> memo_;
  mutable size_t memo_used_ = 0;
};

}  // namespace topofit::placement
