#pragma once
// NodeState: one node of the cluster model - its resolved topology and the pods holding its GPUs.
//
// Concurrency contract:
//   - spec() (topology, usable GPUs, resolution warnings) is immutable for the object's life; a node
//     whose topology changes gets a new NodeState (ClusterModel swaps it under its exclusive lock).
//   - free() and next_expiry() are atomics, readable without any lock: a filter over 5,000 nodes
//     costs one atomic load per node. They are published after every change, under mu_.
//   - Everything about holdings is guarded by mu_, the per-node lock that bind takes. Choosing and
//     recording a reservation happen in one critical section (Reserve), so two binds can never be
//     given the same GPU.
// Invariant (under mu_): the `gpus` of all holdings are pairwise disjoint subsets of usable(), and
// free() == usable() minus their union. Observed sets (gpu-actual) are counted first, then plans
// and gpu-ids claims, then GPUs of unknown identity: actual beats plan, and a plan that collides
// with an observed set loses its identity (it is counted pessimistically), never the GPU's owner.

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/cluster/clock.h"
#include "extender/cluster/free_change_log.h"
#include "extender/cluster/holding.h"
#include "extender/cluster/model_views.h"
#include "extender/cluster/pod_intent.h"
#include "extender/cluster/topology_resolver.h"
#include "topology/gpu_set.h"

namespace topofit::cluster {

// Allocatable non-GPU resources of a node, as the node reports them.
struct NodeResources {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  friend bool operator==(const NodeResources&, const NodeResources&) = default;
};

// A small stable id per distinct GPU model name ("" -> 0), and the name back. Thread-safe.
uint32_t GpuProductId(std::string_view product);
std::string GpuProductName(uint32_t id);

class alignas(64) NodeState {
 public:
  // gpu_product: the node's GPU model (label nvidia.com/gpu.product; "" when unknown).
  NodeState(std::string name, ResolvedTopology spec, NodeResources allocatable = {}, std::string_view gpu_product = {});
  NodeState(const NodeState&) = delete;
  NodeState& operator=(const NodeState&) = delete;

  const std::string& name() const { return name_; }
  // The same bytes, read from the node's first two cache lines when the name fits there (48 bytes:
  // EC2, GKE and AKS names do), so a lookup that compares names touches no other memory.
  std::string_view name_view() const {
    return name_size_ <= kInlineName ? std::string_view(name_inline_, name_size_) : std::string_view(name_);
  }
  const ResolvedTopology& spec() const { return spec_; }
  const Topology* topology() const { return topology_; }
  GpuSet usable() const { return usable_; }
  // The GPU model, interned (GpuProductId); 0 when unknown.
  uint32_t product_id() const { return product_id_; }
  // A small number, unique among the nodes of one ClusterModel at a time, that the model gives
  // (ClusterModel::Reader::slot_bound): a node replaced by one of a new topology keeps it, a deleted
  // node's goes to a later node. kNoSlot for a node no model holds.
  static constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();
  uint32_t slot() const { return slot_; }

  // Lock-free.
  GpuSet free() const { return GpuSet(free_.load(std::memory_order_acquire)); }
  TimePoint next_expiry() const { return TimePoint(Duration(next_expiry_.load(std::memory_order_acquire))); }
  // CPU and memory: allocatable (immutable) and the sum of the holdings' requests (lock-free).
  const NodeResources& allocatable() const { return allocatable_; }
  int64_t used_cpu_milli() const { return used_cpu_.load(std::memory_order_acquire); }
  int64_t used_memory_bytes() const { return used_memory_.load(std::memory_order_acquire); }
  // Bumped on every change of holdings; lets readers tell whether two reads saw the same state.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Adds or updates the holding with h.uid (keeping its original seq), then recounts. A bound pod
  // replacing our own reservation/confirmation with no annotation keeps the reserved GPUs.
  void Upsert(Holding h);
  // Removes uid's holding; false when there was none.
  bool Remove(std::string_view uid);
  // Removes reservations that expired at `now`; appends their uids to `expired`. Drops the plans
  // of bound pods not observed by their plan_deadline (the pods keep their GPU count, of unknown
  // identity); those are not removed and not listed.
  void Expire(TimePoint now, std::vector<std::string>* expired);

  // Picks GPUs with `choose(*this, free)` and records a kReserved holding, atomically. If uid already holds
  // GPUs here (a retried bind), returns those without choosing again. Errors: "no free set" when the
  // chooser returns nullopt.
  using Chooser = std::function<std::optional<GpuSet>(const NodeState& node, GpuSet free)>;
  Result<GpuSet> Reserve(const PodRequest& pod, TimePoint expires, const Chooser& choose);
  // kReserved -> kConfirmed. False when uid has no reservation here (expired, released).
  bool Confirm(std::string_view uid);
  // Drops uid's holding if it is a reservation or confirmation (never a bound pod): false otherwise.
  bool ReleaseReservation(std::string_view uid);

  // ---- A group's reservations (node_state_groups.cc; ClusterModel::ReserveHolds) ----
  struct ExactHold {
    NodeState* node = nullptr;
    std::string uid;  // A placeholder: no pod has it yet.
    std::string pod;  // What views show as the holder.
    GpuSet gpus;
  };
  // Records every hold as a kReserved holding of exactly its GPUs, expiring at `expires`: all or none.
  // The nodes' locks are taken together, in address order (the only place two NodeState locks are held
  // at once). Errors: a hold's GPUs are not free on its node (or given to an earlier hold of the list),
  // empty GPUs, a uid that already holds there.
  static Status ReserveExact(std::span<const ExactHold> holds, TimePoint expires);
  // The reservation of `from_uid` becomes `pod`'s (uid, name, requests), keeping its GPUs; it expires at
  // the later of its expiry and `expires`. True also when pod.uid already holds here (a retried bind).
  // False when from_uid holds no reservation here (it expired or was released).
  bool HandOver(std::string_view from_uid, const PodRequest& pod, TimePoint expires);
  // Moves a reservation's expiry to `expires` when that is later; false when uid has none here.
  bool Extend(std::string_view uid, TimePoint expires);

  // From Attach until Detach, *counter follows this node's free GPU count: Attach adds the count now,
  // every change adds its difference, Detach takes the count off. One counter at a time; the
  // ClusterModel attaches a node while it is part of the model (its free GPUs by GPU model).
  // `counter` gets the node's free GPUs added (and follows them); `changes`, when given, records
  // slot() each time the free GPUs change.
  void AttachFreeCounter(std::atomic<int64_t>* counter, FreeChangeLog* changes = nullptr);
  void DetachFreeCounter();
  // ClusterModel only, under its exclusive lock and before the node is published.
  void AssignSlot(uint32_t slot) { slot_ = slot; }

  // Copies, under mu_.
  std::vector<Holding> Holdings() const;
  std::optional<Holding> Find(std::string_view uid) const;
  // Every GPU of the topology and its state (model_views.h), by index.
  std::vector<GpuStateInfo> GpuStates() const;
  // Resolution warnings plus holding conflicts and over-commitment, one line each.
  std::vector<std::string> Warnings() const;

 private:
  bool PlanMayExpire(const Holding& h) const;  // A bound pod's plan awaits observation on an observing node.
  // Recomputes every holding's gpus (node_state_recount.cc) and publishes the result.
  void RecountLocked();
  // Publishes `free`, the next expiry and the holdings' CPU and memory; bumps version().
  void PublishLocked(GpuSet free);

  static constexpr Duration::rep kNever = std::numeric_limits<Duration::rep>::max();  // next_expiry_: none.

  static constexpr uint32_t kInlineName = 48;
  // Hot: what a lookup and a filter read for every node, in the first two cache lines (the class
  // is 64-aligned; NodeIndex::FindAll prefetches both): the GPU state, then the name's bytes.
  std::atomic<uint64_t> free_;
  std::atomic<Duration::rep> next_expiry_;
  const GpuSet usable_;
  const Topology* const topology_;
  const uint32_t name_size_;
  const uint32_t product_id_;
  char name_inline_[kInlineName] = {};  // name_'s bytes when they fit.
  // Warm, the rest of the second line: what resource-aware score plugins read for every node.
  std::atomic<int64_t> used_cpu_{0};
  std::atomic<int64_t> used_memory_{0};
  const NodeResources allocatable_;
  std::atomic<uint64_t> version_{0};
  // Cold.
  const std::string name_;
  const ResolvedTopology spec_;
  uint32_t slot_ = kNoSlot;

  mutable std::mutex mu_;
  std::atomic<int64_t>* free_counter_ = nullptr;  // Guarded by mu_.
  FreeChangeLog* free_changes_ = nullptr;  // Guarded by mu_.
  std::vector<Holding> holdings_;     // In seq order.
  std::vector<std::string> holding_warnings_;
  static std::atomic<uint64_t> next_seq_;
};

}  // namespace topofit::cluster
