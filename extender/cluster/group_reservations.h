#pragma once
// GroupReservations: a whole group's plan (extender/groups/group_planner.h) reserved in the cluster
// model at once - every member slot's node and exact GPU set - and given to the member pods one by one.
//
// Reserve      all or nothing (ClusterModel::ReserveHolds: the nodes' locks taken together), keyed by
//              the group ("namespace/group"). Each slot is held by a placeholder (no pod yet), so no
//              other pod - of a group or not - can be given its GPUs. A group has one reservation at a
//              time: a second Reserve of a live one is an error (its slots would be given twice).
// Assign       a member pod (by UID) gets a slot on its first filter and keeps it: the slot it has,
//              else the first unassigned one, else one whose member is no longer `alive` (deleted before
//              it bound). Repeated calls for the same pod (kube-scheduler threw its cycle away and
//              tries again) return the same slot.
// HandOver     at bind, the member's slot hold becomes the pod's own reservation (ClusterModel::
//              HandOver); the bind's Confirm/Release then work as for any pod. When the hold is gone
//              (the group's TTL passed), the slot's exact GPUs are reserved for the pod if still free.
// TTL          a group that does not bind within `ttl` (kTtl) loses its reservation: its holds expire
//              in the model by themselves and the group is forgotten here. Every Assign and HandOver
//              refreshes it (members keep arriving: the group is progressing).
// Release      gives back every hold not handed over and forgets the group (the plan is abandoned).
// DropUnhanded gives back every hold not handed over and keeps only the handed slots (their members'
//              binds took them; they are fixed when the group is planned again); a group with none
//              left is forgotten. For a slot kube-scheduler turned away (group_coordinator.h).
// Not errors: Release or Get of a group never reserved (nothing happens / nullopt).
// Lock order: this object's mutex -> ClusterModel's locks (nodes_mu_ -> NodeState::mu_). The model
// never calls back here. Thread-safe.

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/cluster/clock.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/pod_intent.h"
#include "topology/gpu_set.h"

namespace topofit::cluster {

struct GroupSlot {
  std::string node;
  GpuSet gpus;
  std::string hold_uid;    // The placeholder holding the GPUs until the member's bind.
  std::string member_uid;  // "" until a member is assigned.
  bool handed = false;     // The member's bind took the GPUs over.
  friend bool operator==(const GroupSlot&, const GroupSlot&) = default;
};

struct GroupReservation {
  std::string key;
  std::vector<GroupSlot> slots;
  TimePoint reserved_at{};
  TimePoint expires{};
  bool all_handed() const;
};

class GroupReservations {
 public:
  // How long a group's reservation waits for its members' binds, from the last member that arrived
  // (Assign) or bound (HandOver). kube-scheduler retries a pod it could not place within seconds (its
  // backoff is 1 s doubling to 10 s), and topofit asks it to retry the waiting members at once when the
  // group is planned (group_coordinator.h); a group silent for a minute is not coming.
  static constexpr Duration kTtl = std::chrono::seconds(60);

  struct SlotRequest {
    std::string node;
    GpuSet gpus;
  };

  explicit GroupReservations(ClusterModel& model, Duration ttl = kTtl);
  Duration ttl() const { return ttl_; }

  Status Reserve(const std::string& key, std::span<const SlotRequest> slots);
  std::optional<GroupSlot> Assign(const std::string& key, const std::string& uid,
                                  const std::function<bool(std::string_view uid)>& alive);
  std::optional<GroupSlot> SlotOf(std::string_view key, std::string_view uid) const;
  // Errors: the pod has no slot of the group on `node`; the slot's GPUs are gone.
  Result<GpuSet> HandOver(const std::string& key, const PodRequest& pod, std::string_view node);
  void Release(const std::string& key);
  // The slots dropped (0 when the group has no live reservation).
  size_t DropUnhanded(const std::string& key);
  std::optional<GroupReservation> Get(std::string_view key) const;  // A live reservation.
  std::vector<GroupReservation> All() const;                        // The live ones, by key.
  // Forgets the groups past their TTL, giving back their holds; how many.
  size_t Expire();

  // The placeholder's uid for slot k, and what views show as its holder.
  static std::string HoldUid(std::string_view key, size_t k);
  static std::string HoldLabel(std::string_view key, size_t k);

 private:
  // The live reservation of key, or nullptr (one past its TTL is released and forgotten first).
  GroupReservation* LiveLocked(std::string_view key) const;
  void ReleaseLocked(GroupReservation& r) const;
  size_t ExpireLocked() const;
  void RefreshLocked(GroupReservation& r) const;

  ClusterModel& model_;
  const Duration ttl_;
  mutable std::mutex mu_;
  mutable std::map<std::string, GroupReservation, std::less<>> groups_;
};

}  // namespace topofit::cluster
