#pragma once
// PendingPods: the pods kube-scheduler is currently placing, keyed by UID.
//
// Why: filter and prioritize receive the whole Pod, but bind receives only name, namespace, UID and
// node. Bind needs the GPU count and intent to choose the set, so the server Puts every pod it sees
// in filter/prioritize (and the watch Puts unbound pods); bind Gets it by UID.
//
// Bounded and expiring: at most `capacity` entries (the least recently put is evicted first) and an
// entry older than `ttl` is gone, so pods the scheduler gave up on do not accumulate. Thread-safe.

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string_view>

#include "extender/cluster/clock.h"
#include "extender/cluster/expiring_lru.h"
#include "extender/cluster/pod_intent.h"

namespace topofit::cluster {

class PendingPods {
 public:
  static constexpr size_t kDefaultCapacity = 20000;
  static constexpr Duration kDefaultTtl = std::chrono::minutes(15);

  explicit PendingPods(const Clock* clock, size_t capacity = kDefaultCapacity, Duration ttl = kDefaultTtl);

  void Put(PodRequest pod);  // Replaces an entry with the same uid and refreshes its age.
  std::optional<PodRequest> Get(std::string_view uid) const;
  void Erase(std::string_view uid);
  size_t size() const;

 private:
  const Clock* clock_;
  mutable std::mutex mu_;
  ExpiringLru<PodRequest> pods_;  // By uid.
};

}  // namespace topofit::cluster
