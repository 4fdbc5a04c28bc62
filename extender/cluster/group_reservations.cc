#include "extender/cluster/group_reservations.h"

#include <algorithm>

#include <fmt/format.h>

namespace topofit::cluster {

bool GroupReservation::all_handed() const {
  return std::all_of(slots.begin(), slots.end(), [](const GroupSlot& s) { return s.handed; });
}

GroupReservations::GroupReservations(ClusterModel& model, Duration ttl) : model_(model), ttl_(ttl) {}

std::string GroupReservations::HoldUid(std::string_view key, size_t k) { return fmt::format("group-hold:{}#{}", key, k); }

std::string GroupReservations::HoldLabel(std::string_view key, size_t k) {
  return fmt::format("{} (group slot {})", key, k);  // A space: never a pod's name.
}

Status GroupReservations::Reserve(const std::string& key, std::span<const SlotRequest> slots) {
  if (slots.empty()) return Error{"a group reservation needs at least one slot"};
  std::lock_guard lock(mu_);
  if (LiveLocked(key)) return Error{fmt::format("group {} is reserved already", key)};
  std::vector<ClusterModel::SlotHold> holds;
  GroupReservation r;
  r.key = key;
  for (size_t k = 0; k < slots.size(); ++k) {
    holds.push_back({HoldUid(key, k), HoldLabel(key, k), slots[k].node, slots[k].gpus});
    r.slots.push_back(GroupSlot{slots[k].node, slots[k].gpus, holds.back().uid, "", false});
  }
  if (Status s = model_.ReserveHolds(holds, ttl_); !s.ok()) return s;
  r.reserved_at = model_.clock().Now();
  r.expires = r.reserved_at + ttl_;
  groups_.insert_or_assign(key, std::move(r));
  return Status::Ok();
}

GroupReservation* GroupReservations::LiveLocked(std::string_view key) const {
  auto it = groups_.find(key);
  if (it == groups_.end()) return nullptr;
  if (model_.clock().Now() < it->second.expires) return &it->second;
  ReleaseLocked(it->second);
  groups_.erase(it);
  return nullptr;
}

void GroupReservations::ReleaseLocked(GroupReservation& r) const {
  for (const GroupSlot& s : r.slots)
    if (!s.handed) (void)model_.Release(s.hold_uid);
}

void GroupReservations::RefreshLocked(GroupReservation& r) const {
  std::vector<std::string> holds;
  for (const GroupSlot& s : r.slots)
    if (!s.handed) holds.push_back(s.hold_uid);
  model_.ExtendHolds(holds, ttl_);
  r.expires = model_.clock().Now() + ttl_;
}

std::optional<GroupSlot> GroupReservations::Assign(const std::string& key, const std::string& uid,
                                                   const std::function<bool(std::string_view)>& alive) {
  std::lock_guard lock(mu_);
  GroupReservation* r = LiveLocked(key);
  if (!r || uid.empty()) return std::nullopt;
  auto pick = [&]() -> GroupSlot* {
    for (GroupSlot& s : r->slots)
      if (s.member_uid == uid) return &s;
    for (GroupSlot& s : r->slots)
      if (s.member_uid.empty()) return &s;
    for (GroupSlot& s : r->slots)
      if (!s.handed && !alive(s.member_uid)) return &s;
    return nullptr;
  };
  GroupSlot* slot = pick();
  if (!slot) return std::nullopt;
  slot->member_uid = uid;
  RefreshLocked(*r);
  return *slot;
}

std::optional<GroupSlot> GroupReservations::SlotOf(std::string_view key, std::string_view uid) const {
  std::lock_guard lock(mu_);
  const GroupReservation* r = LiveLocked(key);
  if (!r || uid.empty()) return std::nullopt;
  for (const GroupSlot& s : r->slots)
    if (s.member_uid == uid) return s;
  return std::nullopt;
}

Result<GpuSet> GroupReservations::HandOver(const std::string& key, const PodRequest& pod, std::string_view node) {
  std::lock_guard lock(mu_);
  GroupReservation* r = LiveLocked(key);
  GroupSlot* slot = nullptr;
  if (r) {
    for (GroupSlot& s : r->slots)
      if (s.member_uid == pod.uid && s.node == node) slot = &s;
  }
  if (!slot) return Error{fmt::format("pod {} has no slot of group {} on node {}", pod.key(), key, node)};
  if (Status s = model_.HandOver(slot->hold_uid, pod, node); !s.ok()) {
    // The hold is gone: the slot's very GPUs, if nobody took them meanwhile.
    const GpuSet want = slot->gpus;
    auto again = model_.Reserve(pod, node, [want](const NodeState&, GpuSet free) -> std::optional<GpuSet> {
      if (want.IsSubsetOf(free)) return want;
      return std::nullopt;
    });
    if (!again) return Error{fmt::format("{}; GPUs {} are taken since", s.error(), want.ToString())};
  }
  slot->handed = true;
  RefreshLocked(*r);
  return slot->gpus;
}

void GroupReservations::Release(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  ReleaseLocked(it->second);
  groups_.erase(it);
}

size_t GroupReservations::DropUnhanded(const std::string& key) {
  std::lock_guard lock(mu_);
  GroupReservation* r = LiveLocked(key);
  if (!r) return 0;
  ReleaseLocked(*r);
  const size_t before = r->slots.size();
  std::erase_if(r->slots, [](const GroupSlot& s) { return !s.handed; });
  const size_t dropped = before - r->slots.size();
  if (r->slots.empty()) groups_.erase(groups_.find(key));
  return dropped;
}

std::optional<GroupReservation> GroupReservations::Get(std::string_view key) const {
  std::lock_guard lock(mu_);
  const GroupReservation* r = LiveLocked(key);
  if (!r) return std::nullopt;
  return *r;
}

std::vector<GroupReservation> GroupReservations::All() const {
  std::lock_guard lock(mu_);
  (void)ExpireLocked();
  std::vector<GroupReservation> out;
  for (const auto& [key, r] : groups_) out.push_back(r);
  return out;
}

size_t GroupReservations::Expire() {
  std::lock_guard lock(mu_);
  return ExpireLocked();
}

size_t GroupReservations::ExpireLocked() const {
  const TimePoint now = model_.clock().Now();
  size_t n = 0;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (now < it->second.expires) {
      ++it;
      continue;
    }
    ReleaseLocked(it->second);
    it = groups_.erase(it);
    ++n;
  }
  return n;
}

}  // namespace topofit::cluster
