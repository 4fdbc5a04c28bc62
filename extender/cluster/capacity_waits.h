#pragma once
// CapacityWaits: pods topofit turned away for want of free GPUs on nodes kube-scheduler saw room on,
// so that they are tried again as soon as topofit sees GPUs freed there.
//
// Why: kube-scheduler requeues a pod an extender turned away on the next cluster event of any kind.
// When a pod holding GPUs goes, kube-scheduler's informer and topofit's watch learn it separately. If
// kube-scheduler learns first and tries a waiting pod in between, topofit (still counting the pod that
// went) turns it away, and the event that would have requeued it has already passed: the pod waits
// for some unrelated event, up to kube-scheduler's flush of unschedulable pods (5 minutes). A node
// filter fails resolvably (filter_plugins.h: too few free GPUs, or no free set meeting the policy)
// only on a node kube-scheduler sent, that is one whose GPU count its own filter passed.
//
// Note records such a failure; Freed, called after the model freed GPUs on a node, returns the pods
// noted there that want no more GPUs than are free now, each once (it forgets them everywhere): the
// caller touches them (KubeWriter::RequeuePod), an event for the pod itself. Forget drops a pod that
// was bound or deleted. Not an error: a pod noted again (its latest nodes replace the earlier), Freed
// or Forget for nodes or pods never noted. At most `capacity` pods (the least recently noted go
// first); an entry older than `ttl` is gone (kube-scheduler has flushed the pod by then). A free that
// lands between filter's read of the model and its Note goes unseen here (the flush still retries the
// pod). Thread-safe.

#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/cluster/clock.h"
#include "extender/cluster/expiring_lru.h"

namespace topofit::cluster {

struct WaitingPod {
  std::string uid, namespace_, name;
  int gpus = 0;
};

class CapacityWaits {
 public:
  static constexpr size_t kDefaultCapacity = 20000;
  static constexpr Duration kDefaultTtl = std::chrono::minutes(5);

  explicit CapacityWaits(const Clock* clock, size_t capacity = kDefaultCapacity, Duration ttl = kDefaultTtl);

  // `pod.uid` empty or `nodes` empty: nothing is noted.
  void Note(const WaitingPod& pod, const std::vector<std::string>& nodes);
  std::vector<WaitingPod> Freed(std::string_view node, int free_gpus);
  void Forget(std::string_view uid);
  size_t size() const;

 private:
  struct Entry {
    WaitingPod pod;
    std::vector<std::string> nodes;
  };
  void UnindexLocked(const Entry& e);

  const Clock* clock_;
  mutable std::mutex mu_;
  ExpiringLru<Entry> by_uid_;
  std::unordered_map<std::string, std::set<std::string>> by_node_;  // node -> uids noted there
};

}  // namespace topofit::cluster
