#include "extender/cluster/pending_pods.h"

namespace topofit::cluster {

PendingPods::PendingPods(const Clock* clock, size_t capacity, Duration ttl) : clock_(clock), pods_(capacity, ttl) {}

void PendingPods::Put(PodRequest pod) {
  if (pod.uid.empty()) return;
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  std::string uid = pod.uid;
  pods_.Put(std::move(uid), std::move(pod), now);
}

std::optional<PodRequest> PendingPods::Get(std::string_view uid) const {
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  const PodRequest* pod = pods_.Find(uid, now);
  if (!pod) return std::nullopt;
  return *pod;
}

void PendingPods::Erase(std::string_view uid) {
  std::lock_guard lock(mu_);
  pods_.Erase(uid);
}

size_t PendingPods::size() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

}  // namespace topofit::cluster
