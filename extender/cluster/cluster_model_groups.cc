// ClusterModel's part in a group's reservations (group_reservations.h): the holds of a whole group
// reserved at once, handed to each member at its bind, kept alive while members arrive; and the
// group members it has seen.
#include <fmt/format.h>

#include "extender/cluster/cluster_model.h"

namespace topofit::cluster {

void ClusterModel::NoteGroupMember(const k8s::PodObject& pod) {
  const std::string group = k8s::GroupNameOf(pod.group_ref, pod.meta.annotations);
  if (group.empty()) return;
  if (pod.meta.deleting) {  // Leaving: a re-created member takes its place.
    group_members_.Erase(pod.meta.uid);
    return;
  }
  group_members_.Put(pod.meta.namespace_ + "/" + group, GroupMember{pod.meta.uid, pod.meta.name, pod.node_name});
}

Status ClusterModel::ReserveHolds(std::span<const SlotHold> holds, Duration ttl) {
  const TimePoint now = clock_->Now();
  std::shared_lock lock(nodes_mu_);
  std::vector<NodeState::ExactHold> exact;
  exact.reserve(holds.size());
  for (const SlotHold& h : holds) {
    auto it = nodes_.find(h.node);
    if (it == nodes_.end()) return Error{fmt::format("unknown node {}", h.node)};
    if (now >= it->second->next_expiry()) ExpireNode(*it->second, now);
    exact.push_back({it->second.get(), h.uid, h.pod, h.gpus});
  }
  if (Status s = NodeState::ReserveExact(exact, now + ttl); !s.ok()) return s;
  std::lock_guard ilock(index_mu_);
  for (const SlotHold& h : holds) pods_.insert_or_assign(h.uid, PodLocation{h.node, h.pod});
  return Status::Ok();
}

Status ClusterModel::HandOver(std::string_view from_uid, const PodRequest& pod, std::string_view node) {
  if (pod.uid.empty()) return Error{"pod has no UID"};
  {
    const TimePoint now = clock_->Now();
    std::shared_lock lock(nodes_mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return Error{fmt::format("unknown node {}", node)};
    if (now >= it->second->next_expiry()) ExpireNode(*it->second, now);
    if (!it->second->HandOver(from_uid, pod, now + options_.reservation_ttl)) {
      return Error{fmt::format("the group's reservation {} on node {} is gone (expired or released)", from_uid, node)};
    }
    const bool hold_gone = !it->second->Find(from_uid);  // Not when the pod held here already.
    std::lock_guard ilock(index_mu_);
    if (auto p = pods_.find(from_uid); hold_gone && p != pods_.end() && p->second.node == node) pods_.erase(p);
  }
  // The pod holds the slot's GPUs on `node` now: Reserve finds them there (and releases a reservation
  // the pod had on another node, or refuses a pod bound elsewhere), and indexes the pod.
  auto held = Reserve(pod, node, [](const NodeState&, GpuSet) { return std::optional<GpuSet>(); });
  if (!held) return Error{held.error()};
  return Status::Ok();
}

void ClusterModel::ExtendHolds(std::span<const std::string> uids, Duration ttl) {
  const TimePoint expires = clock_->Now() + ttl;
  std::shared_lock lock(nodes_mu_);
  for (const std::string& uid : uids) {
    std::optional<PodLocation> loc;
    {
      std::lock_guard ilock(index_mu_);
      if (auto p = pods_.find(uid); p != pods_.end()) loc = p->second;
    }
    if (!loc) continue;
    if (auto it = nodes_.find(loc->node); it != nodes_.end()) it->second->Extend(uid, expires);
  }
}

}  // namespace topofit::cluster
