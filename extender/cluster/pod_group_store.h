#pragma once
// PodGroupStore: the PodGroups of the cluster (k8s/pod_group.h: Workload API and coscheduling), by API,
// namespace and name - what a member's group asks, for extender/groups/pod_group_lookup.h.
//
// Fed by the API server's watches (extender/apiclient/pod_group_watch.h) or a snapshot (serve
// --snapshot); read by every filter. Put stores a PodGroup new or changed and then calls the change
// callback (outside the lock; e.g. to requeue the members waiting for it); an unchanged one is not
// stored again. Bounded: at most `capacity` PodGroups; past it a new one is refused (kFull: its
// members stay held, "not found yet"), while known ones still change and go.
// Not an error: Erase of a PodGroup never put. Thread-safe; its lock is a leaf (nothing is locked under
// it, and the callback runs after it is released). Set the callback before the feeds start.

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "extender/k8s/pod_group.h"

namespace topofit::cluster {

class PodGroupStore {
 public:
  static constexpr size_t kDefaultCapacity = 100000;
  enum class PutResult : uint8_t { kStored, kUnchanged, kFull };
  using Api = k8s::PodGroupObject::Api;

  explicit PodGroupStore(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  PutResult Put(const k8s::PodGroupObject& group);
  void Erase(Api api, std::string_view namespace_, std::string_view name);
  std::optional<k8s::PodGroupObject> Find(Api api, std::string_view namespace_, std::string_view name) const;
  size_t size() const;
  void SetOnChange(std::function<void(const k8s::PodGroupObject&)> on_change) { on_change_ = std::move(on_change); }

 private:
  static std::string Key(Api api, std::string_view namespace_, std::string_view name);

  const size_t capacity_;
  std::function<void(const k8s::PodGroupObject&)> on_change_;
  mutable std::mutex mu_;
  std::map<std::string, k8s::PodGroupObject, std::less<>> groups_;
};

}  // namespace topofit::cluster
