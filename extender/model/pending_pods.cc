#include "extender/model/pending_pods.h"

namespace topofit::model {

PendingPods::PendingPods(const Clock* clock, size_t capacity, Duration ttl)
    : clock_(clock), capacity_(capacity == 0 ? 1 : capacity), ttl_(ttl) {}

void PendingPods::EvictLocked(TimePoint now) {
  while (!order_.empty() && (order_.size() > capacity_ || now - order_.front().put_at >= ttl_)) {
    by_uid_.erase(order_.front().pod.uid);
    order_.pop_front();
  }
}

void PendingPods::Put(PodRequest pod) {
  if (pod.uid.empty()) return;
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  if (auto it = by_uid_.find(pod.uid); it != by_uid_.end()) {
    order_.erase(it->second);
    by_uid_.erase(it);
  }
  std::string uid = pod.uid;
  order_.push_back(Entry{std::move(pod), now});
  by_uid_.emplace(std::move(uid), std::prev(order_.end()));
  EvictLocked(now);
}

std::optional<PodRequest> PendingPods::Get(std::string_view uid) const {
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  auto it = by_uid_.find(std::string(uid));
  if (it == by_uid_.end() || now - it->second->put_at >= ttl_) return std::nullopt;
  return it->second->pod;
}

void PendingPods::Erase(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = by_uid_.find(std::string(uid));
  if (it == by_uid_.end()) return;
  order_.erase(it->second);
  by_uid_.erase(it);
}

size_t PendingPods::size() const {
  std::lock_guard lock(mu_);
  return by_uid_.size();
}

}  // namespace topofit::model
