// NodeState's part in a group's reservations (group_reservations.h): exact sets on several nodes at once,
// handed to the member pods at bind.
#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "extender/cluster/node_state.h"

namespace topofit::cluster {

namespace {

// Why `holds` (all on one node, whose free GPUs are `free`) cannot be reserved there; "" when they can.
std::string CheckHolds(const NodeState& node, GpuSet free, const std::vector<const NodeState::ExactHold*>& holds,
                       const std::vector<Holding>& existing) {
  GpuSet given;
  for (const NodeState::ExactHold* h : holds) {
    if (h->gpus.empty()) return fmt::format("hold {} on node {} has no GPUs", h->uid, node.name());
    if (!h->gpus.IsSubsetOf(free) || h->gpus.Intersects(given)) {
      return fmt::format("GPUs {} of node {} are no longer free (free: {})", h->gpus.ToString(), node.name(),
                         free.ToString());
    }
    for (const Holding& o : existing)
      if (o.uid == h->uid) return fmt::format("{} already holds GPUs on node {}", h->uid, node.name());
    given = given | h->gpus;
  }
  return "";
}

}  // namespace

Status NodeState::ReserveExact(std::span<const ExactHold> holds, TimePoint expires) {
  // Per node, in address order: the order every caller locks several nodes in.
  std::vector<NodeState*> nodes;
  for (const ExactHold& h : holds) nodes.push_back(h.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (!nodes.empty() && !nodes.front()) return Error{"a hold names no node"};
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(nodes.size());
  for (NodeState* n : nodes) locks.emplace_back(n->mu_);
  for (NodeState* n : nodes) {
    std::vector<const ExactHold*> mine;
    for (const ExactHold& h : holds)
      if (h.node == n) mine.push_back(&h);
    std::string why = CheckHolds(*n, n->free(), mine, n->holdings_);
    if (!why.empty()) return Error{why};
  }
  for (NodeState* n : nodes) {
    for (const ExactHold& e : holds) {
      if (e.node != n) continue;
      Holding h;
      h.uid = e.uid;
      h.pod = e.pod;
      h.count = e.gpus.size();
      h.claimed = e.gpus;
      h.kind = HoldingKind::kReserved;
      h.expires = expires;
      h.seq = next_seq_.fetch_add(1);
      n->holdings_.push_back(std::move(h));
    }
    n->RecountLocked();
  }
  return Status::Ok();
}

bool NodeState::HandOver(std::string_view from_uid, const PodRequest& pod, TimePoint expires) {
  std::lock_guard lock(mu_);
  Holding* from = nullptr;
  for (Holding& h : holdings_) {
    if (h.uid == pod.uid) return true;
    if (h.uid == from_uid && h.kind == HoldingKind::kReserved) from = &h;
  }
  if (!from) return false;
  from->uid = pod.uid;
  from->pod = pod.key();
  from->priority = pod.priority;
  from->cpu_milli = pod.cpu_milli;
  from->memory_bytes = pod.memory_bytes;
  from->expires = std::max(from->expires, expires);
  RecountLocked();
  return true;
}

bool NodeState::Extend(std::string_view uid, TimePoint expires) {
  std::lock_guard lock(mu_);
  for (Holding& h : holdings_) {
    if (h.uid != uid || h.kind != HoldingKind::kReserved) continue;
    if (h.expires < expires) {
      h.expires = expires;
      RecountLocked();
    }
    return true;
  }
  return false;
}

}  // namespace topofit::cluster
