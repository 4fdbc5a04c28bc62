#pragma once
// ClusterModel: the in-memory cluster GPU model - nodes, their topologies, and which pod holds which
// GPU - shared by the extender's verbs, the watch, the snapshot loader and the trace-replay bench.
//
// Writers: ApplyNode / DeleteNode / ApplyPod / DeletePod (snapshot loader, watch events) and the
// bind path (Reserve / Confirm / Release). They are idempotent: applying the same object twice
// changes nothing, so a watch re-list is just more Apply calls.
//   ApplyPod: a terminated (Succeeded/Failed) pod holds nothing; a terminating one (deletionTimestamp)
//   holds what it held until it is terminal or deleted, as kubelet does. An unbound GPU pod goes to
//   the pending cache. A bound pod becomes a holding: what the node observed (topofit.io/gpu-actual)
//   names its GPUs, else its plan (topofit.io/gpu-plan) or topofit.io/gpu-ids; without any (or
//   with an invalid or conflicting one) it holds `gpus` GPUs of unknown identity, counted
//   pessimistically (see holding.h). On a node that reports observations, a plan not observed
//   within plan_ttl is dropped: the pod keeps its GPU count, of unknown identity. Bound pods without GPUs hold only their CPU
//   and memory requests (for resource-aware scores; views of "who holds which GPU" skip them). Pods
//   bound to a node the model does not know yet are parked and attached when the node arrives.
// Readers: Read() gives a Reader that holds the node map's shared lock; looking a node up is one
// hash lookup and its free GPUs one atomic load, so a filter over 5,000 nodes takes microseconds.
// Reservations expire lazily (a reader that finds a node past its next expiry sweeps that node) and
// by ExpireReservations(), which the server may call periodically.
//
// Lock order: nodes_mu_ (shared or exclusive) -> NodeState::mu_ -> index_mu_. Several NodeState::mu_
// are held at once only by ReserveHolds, in address order. No GPU is ever given to two pods: choosing
// and recording a reservation happen under the node's lock (a group's: under all its nodes' locks).
// Thread-safe throughout.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "extender/k8s/objects.h"
#include "extender/cluster/capacity_waits.h"
#include "extender/cluster/clock.h"
#include "extender/cluster/free_change_log.h"
#include "extender/cluster/free_shapes.h"
#include "extender/cluster/free_gpus.h"
#include "extender/cluster/group_members.h"
#include "extender/cluster/model_views.h"
#include "extender/cluster/node_index.h"
#include "extender/cluster/node_state.h"
#include "extender/cluster/pending_pods.h"
#include "extender/cluster/pod_intent.h"
#include "extender/cluster/topology_resolver.h"
#include "topology/topology.h"

namespace topofit::cluster {

struct ModelOptions {
  // How long a reservation made by bind holds its GPUs without Confirm or Release. Longer than the
  // bind's own API writes can take; short enough that an abandoned bind frees its GPUs soon.
  Duration reservation_ttl = std::chrono::seconds(30);
  // How long a bound pod's plan waits to be observed (topofit.io/gpu-actual) on a node that reports
  // observations. kubelet admits a bound pod within seconds; image pulls come after admission, and
  // the node side publishes what it saw within its resync period. Past this, something is wrong
  // (the node side is down, or the pod never got admitted), and the plan is no longer trusted.
  Duration plan_ttl = std::chrono::minutes(3);
  const Clock* clock = nullptr;  // nullptr: SystemClock.
  size_t pending_capacity = PendingPods::kDefaultCapacity;
  Duration pending_ttl = PendingPods::kDefaultTtl;
};

class ClusterModel {
 public:
  explicit ClusterModel(ModelOptions options = {});
  ~ClusterModel();
  ClusterModel(const ClusterModel&) = delete;
  ClusterModel& operator=(const ClusterModel&) = delete;

  // ---- Writers ----
  // dra: the node's GPUs as DRA serves them (DraCluster, dra_cluster.h), nullptr where the device
  // plugin serves them; a change of dra re-resolves the node as a change of its labels would.
  // A node whose topology inputs changed (or a new one) is resolved again; its resolution warnings
  // (a topology modelled as given, annotations that disagree, ...) are logged then, one line each:
  //   level=warn msg="node warning" node=NAME detail="..."
  void ApplyNode(const k8s::NodeObject& node, const DraNodeGpus* dra = nullptr);
  void DeleteNode(std::string_view name);
  void ApplyPod(const k8s::PodObject& pod);
  void DeletePod(std::string_view uid);

  // ---- Bind support (Pipeline::ReserveBest supplies the chooser) ----
  // Chooses with `choose(node, free)` and reserves under the node's lock. Idempotent: if the pod already
  // holds GPUs on `node` the same GPUs come back; if it holds a reservation on another node, that one
  // is released first. Errors: "unknown node", "no GPUs requested", or the chooser's "no free set".
  Result<GpuSet> Reserve(const PodRequest& pod, std::string_view node, const NodeState::Chooser& choose);
  // After the bind's API writes succeeded: the reservation no longer expires.
  Status Confirm(std::string_view uid);
  // After the bind failed: frees the reservation. OK when there was nothing to release.
  Status Release(std::string_view uid);
  // Sweeps every node; returns how many reservations expired.
  size_t ExpireReservations();

  // ---- A group's reservations (cluster_model_groups.cc; group_reservations.h keeps the groups) ----
  struct SlotHold {
    std::string uid;   // A placeholder uid, no pod's.
    std::string pod;   // What views show as the holder.
    std::string node;
    GpuSet gpus;
  };
  // Every hold's exact GPUs on its node, reserved until now + ttl: all or none (NodeState::ReserveExact,
  // the nodes' locks taken together). Errors: an unknown node, GPUs no longer free.
  Status ReserveHolds(std::span<const SlotHold> holds, Duration ttl);
  // At bind: the hold `from_uid` on `node` becomes `pod`'s reservation, with its GPUs, expiring no
  // sooner than a bind's reservation (reservation_ttl); a reservation the pod had on another node is
  // released first. Then Reserve/Confirm/Release work on it as on any bind's. OK when the pod already
  // holds there; an Error when the hold is gone (expired or released) or the pod is bound elsewhere.
  Status HandOver(std::string_view from_uid, const PodRequest& pod, std::string_view node);
  // Moves each hold's expiry to now + ttl (holds already gone are skipped).
  void ExtendHolds(std::span<const std::string> uids, Duration ttl);
  const Clock& clock() const { return *clock_; }

  // ---- Readers ----
  // Holds the node map's shared lock while alive: keep it for one verb, not longer. Nodes found
  // through it stay valid while it lives. Do not call other ClusterModel methods while holding one:
  // shared locks do not nest safely once a writer is waiting.
  class Reader {
   public:
    const NodeState* Find(std::string_view name) const;  // nullptr for unknown nodes.
    // Find for every name, batched (NodeIndex::FindAll), in blocks small enough that the nodes
    // found are still in cache when f sees them: f(index into names, node or nullptr), in order.
    template <typename F>
    void FindEach(std::span<const std::string_view> names, F&& f) const {
      constexpr size_t kBlock = 256;
      const NodeState* found[kBlock];
      for (size_t b = 0; b < names.size(); b += kBlock) {
        const size_t n = std::min(kBlock, names.size() - b);
        model_->by_name_.FindAll(names.subspan(b, n), std::span<const NodeState*>(found, n));
        for (size_t i = 0; i < n; ++i) {
          if (found[i]) MaybeExpire(*found[i]);
          f(static_cast<uint32_t>(b + i), found[i]);
        }
      }
    }
    template <typename F>
    void ForEach(F&& f) const {  // f(const NodeState&), in no particular order.
      for (const auto& [name, node] : model_->nodes_) {
        MaybeExpire(*node);
        f(*node);
      }
    }
    // The free GPUs of every node, by GPU model (ProductShortfall's supply; nodes without GPUs add
    // nothing). Kept by counters the nodes update as their GPUs change: a few loads, however many
    // nodes; reservations past their expiry count as held until a reader or ExpireReservations sweeps them.
    FreeGpus FreeByProduct() const;
    size_t size() const { return model_->nodes_.size(); }
    // One more than the highest NodeState::slot() of the model's nodes (0 without nodes): a vector of
    // this size has a place for every node's slot. Changes only with node_generation().
    uint32_t slot_bound() const { return model_->slot_bound_; }

   private:
    friend class ClusterModel;
    explicit Reader(const ClusterModel* model);
    // Drops expired reservations of the node first (the check is inline: it runs for every node).
    void MaybeExpire(const NodeState& node) const {
      if (now_ >= node.next_expiry()) Expire(node);
    }
    void Expire(const NodeState& node) const;
    const ClusterModel* model_;
    std::shared_lock<std::shared_mutex> lock_;
    TimePoint now_;
  };
  Reader Read() const { return Reader(this); }

  std::optional<NodeInfo> Node(std::string_view name) const;
  std::vector<NodeInfo> Nodes() const;        // Sorted by name.
  std::vector<std::string> NodeNames() const; // Sorted.
  // Changes whenever a node is added or deleted, or its labels or topology inputs change (never on
  // a pod's change): a view built from Nodes() at generation G is still right while it is G.
  uint64_t node_generation() const { return node_generation_.load(std::memory_order_acquire); }
  // Changes whenever some node's free GPUs change (a reservation, a bind, a release, an expiry, a pod
  // leaving): with node_generation, a view of every node's free GPUs read after seeing G is still right
  // while it is G.
  uint64_t gpu_generation() const { return free_changes_.generation(); }
  // Which nodes (NodeState::slot) those changes were, by generation.
  const FreeChangeLog& free_changes() const { return free_changes_; }
  std::optional<PodGpuInfo> PodByUid(std::string_view uid) const;
  std::optional<PodGpuInfo> PodByName(std::string_view namespace_, std::string_view name) const;
  ClusterTotals Totals() const;

  PendingPods& pending() { return pending_; }
  const PendingPods& pending() const { return pending_; }
  CapacityWaits& waits() { return waits_; }
  GroupMembers& group_members() { return group_members_; }
  const GroupMembers& group_members() const { return group_members_; }
  FreeShapes ShapesOf(const NodeState& node) const;

 private:
  struct PodLocation {
    std::string node;
    std::string pod;  // "namespace/name"
  };
  NodeInfo InfoOf(const NodeState& node) const;
  void ExpireNode(const NodeState& node, TimePoint now) const;
  void RemoveFromIndexLocked(const std::string& uid);
  // Attaches the node to its GPU model's free-GPU counter and counts its node type; Detach undoes
  // both (nodes_mu_ held exclusively).
  void AttachFreeCounterLocked(NodeState& node);
  void DetachFreeCounterLocked(NodeState& node);
  // Removes uid's holding wherever it is (node or parked); index_mu_ must not be held.
  void DetachPodLocked(const std::string& uid, bool reservations_only);
  // Records a bound pod's holding on `node`, or parks it there until the node arrives; a holding
  // the pod had on another node goes (nodes_mu_ held shared, index_mu_ not held).
  void PutBoundLocked(const std::string& node, Holding h);
  // A group member (k8s::GroupNameOf: a PodGroup or topofit.io/group) into group_members_ (or out, when
  // it is leaving).
  void NoteGroupMember(const k8s::PodObject& pod);

  const Clock* clock_;
  const ModelOptions options_;
  TopologyRegistry registry_;
  TopologyResolver resolver_;
  mutable FreeShapeCounter shapes_;
  PendingPods pending_;
  CapacityWaits waits_;
  GroupMembers group_members_;

  mutable std::shared_mutex nodes_mu_;
  // Free GPUs by GPU model (product id), kept by the nodes (NodeState::AttachFreeCounter). Entries
  // are added under nodes_mu_ held exclusively and never removed, so readers may hold it shared;
  // declared before nodes_ so that the counters outlive the nodes.
  std::unordered_map<uint32_t, std::unique_ptr<std::atomic<int64_t>>> free_by_product_;
  FreeChangeLog free_changes_;  // Recorded by the nodes (NodeState::AttachFreeCounter).
  // NodeState::slot: the slots of deleted nodes, given again first; one more than the highest given.
  std::vector<uint32_t> free_slots_;  // Guarded by nodes_mu_.
  uint32_t slot_bound_ = 0;           // Guarded by nodes_mu_.
  // Nodes with GPUs by (topology, usable GPUs, GPU model), for FreeByProduct's node types.
  std::map<std::tuple<const Topology*, uint64_t, uint32_t>, int> node_types_;
  struct SvHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::shared_ptr<NodeState>, SvHash, std::equal_to<>> nodes_;
  NodeIndex by_name_;  // The same nodes, for the hot-path lookup.
  // The inputs the spec was resolved from, to skip re-resolving unchanged nodes (heartbeats).
  std::unordered_map<std::string, std::string, SvHash, std::equal_to<>> node_inputs_;
  // Each node's labels, for views (NodeInfo::labels); kept apart from the state a label-only change
  // must not rebuild. Guarded by nodes_mu_.
  std::unordered_map<std::string, std::map<std::string, std::string>, SvHash, std::equal_to<>> node_labels_;
  std::atomic<uint64_t> node_generation_{0};  // Bumped under nodes_mu_ held exclusively.

  mutable std::mutex index_mu_;
  std::unordered_map<std::string, PodLocation, SvHash, std::equal_to<>> pods_;  // uid -> location
  std::unordered_map<std::string, std::string, SvHash, std::equal_to<>> uid_by_pod_;  // ns/name -> uid
  // Holdings of bound pods whose node the model does not know (yet), by node name.
  std::unordered_map<std::string, std::vector<Holding>, SvHash, std::equal_to<>> parked_;
};

}  // namespace topofit::cluster
