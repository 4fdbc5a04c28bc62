#include "extender/model/capacity_waits.h"

namespace topofit::model {

CapacityWaits::CapacityWaits(const Clock* clock, size_t capacity, Duration ttl)
    : clock_(clock), capacity_(capacity == 0 ? 1 : capacity), ttl_(ttl) {}

void CapacityWaits::EraseLocked(std::list<Entry>::iterator it) {
  for (const auto& node : it->nodes) {
    auto n = by_node_.find(node);
    if (n == by_node_.end()) continue;
    n->second.erase(it->pod.uid);
    if (n->second.empty()) by_node_.erase(n);
  }
  by_uid_.erase(it->pod.uid);
  order_.erase(it);
}

void CapacityWaits::EvictLocked(TimePoint now) {
  while (!order_.empty() && (order_.size() > capacity_ || now - order_.front().noted_at >= ttl_))
    EraseLocked(order_.begin());
}

void CapacityWaits::Note(const WaitingPod& pod, const std::vector<std::string>& nodes) {
  if (pod.uid.empty() || nodes.empty()) return;
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  if (auto it = by_uid_.find(pod.uid); it != by_uid_.end()) EraseLocked(it->second);
  order_.push_back(Entry{pod, nodes, now});
  auto it = std::prev(order_.end());
  by_uid_.emplace(pod.uid, it);
  for (const auto& node : nodes) by_node_[node].insert(pod.uid);
  EvictLocked(now);
}

std::vector<WaitingPod> CapacityWaits::Freed(std::string_view node, int free_gpus) {
  std::vector<WaitingPod> out;
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  EvictLocked(now);
  auto n = by_node_.find(std::string(node));
  if (n == by_node_.end()) return out;
  std::vector<std::list<Entry>::iterator> ready;
  for (const auto& uid : n->second) {
    auto it = by_uid_.at(uid);
    if (it->pod.gpus <= free_gpus) ready.push_back(it);
  }
  for (auto it : ready) {
    out.push_back(it->pod);
    EraseLocked(it);  // May erase `n`; not used after this loop.
  }
  return out;
}

void CapacityWaits::Forget(std::string_view uid) {
  std::lock_guard lock(mu_);
  if (auto it = by_uid_.find(std::string(uid)); it != by_uid_.end()) EraseLocked(it->second);
}

size_t CapacityWaits::size() const {
  std::lock_guard lock(mu_);
  return by_uid_.size();
}

}  // namespace topofit::model
