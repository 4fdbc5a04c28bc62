#include "extender/cluster/capacity_waits.h"

namespace topofit::cluster {

CapacityWaits::CapacityWaits(const Clock* clock, size_t capacity, Duration ttl)
    : clock_(clock), by_uid_(capacity, ttl) {}

void CapacityWaits::UnindexLocked(const Entry& e) {
  for (const auto& node : e.nodes) {
    auto n = by_node_.find(node);
    if (n == by_node_.end()) continue;
    n->second.erase(e.pod.uid);
    if (n->second.empty()) by_node_.erase(n);
  }
}

void CapacityWaits::Note(const WaitingPod& pod, const std::vector<std::string>& nodes) {
  if (pod.uid.empty() || nodes.empty()) return;
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  if (auto old = by_uid_.Erase(pod.uid)) UnindexLocked(*old);
  for (const auto& node : nodes) by_node_[node].insert(pod.uid);
  for (const Entry& gone : by_uid_.Put(pod.uid, Entry{pod, nodes}, now)) UnindexLocked(gone);
}

std::vector<WaitingPod> CapacityWaits::Freed(std::string_view node, int free_gpus) {
  std::vector<WaitingPod> out;
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  for (const Entry& gone : by_uid_.Expire(now)) UnindexLocked(gone);
  auto n = by_node_.find(std::string(node));
  if (n == by_node_.end()) return out;
  std::vector<std::string> ready;
  for (const auto& uid : n->second) {
    const Entry* e = by_uid_.Find(uid, now);
    if (e && e->pod.gpus <= free_gpus) ready.push_back(uid);
  }
  for (const auto& uid : ready) {  // Unindexing may erase `n`; not used after this loop.
    if (auto e = by_uid_.Erase(uid)) {
      UnindexLocked(*e);
      out.push_back(std::move(e->pod));
    }
  }
  return out;
}

void CapacityWaits::Forget(std::string_view uid) {
  std::lock_guard lock(mu_);
  if (auto e = by_uid_.Erase(uid)) UnindexLocked(*e);
}

size_t CapacityWaits::size() const {
  std::lock_guard lock(mu_);
  return by_uid_.size();
}

}  // namespace topofit::cluster
