#include "extender/cluster/pod_group_store.h"

#include <fmt/format.h>

namespace topofit::cluster {

std::string PodGroupStore::Key(Api api, std::string_view namespace_, std::string_view name) {
  return fmt::format("{}/{}/{}", k8s::ToString(api), namespace_, name);
}

PodGroupStore::PutResult PodGroupStore::Put(const k8s::PodGroupObject& group) {
  {
    std::lock_guard lock(mu_);
    const std::string key = Key(group.api, group.namespace_, group.name);
    auto it = groups_.find(key);
    if (it != groups_.end() && it->second == group) return PutResult::kUnchanged;
    if (it == groups_.end() && groups_.size() >= capacity_) return PutResult::kFull;
    groups_.insert_or_assign(key, group);
  }
  if (on_change_) on_change_(group);
  return PutResult::kStored;
}

void PodGroupStore::Erase(Api api, std::string_view namespace_, std::string_view name) {
  std::lock_guard lock(mu_);
  groups_.erase(Key(api, namespace_, name));
}

std::optional<k8s::PodGroupObject> PodGroupStore::Find(Api api, std::string_view namespace_,
                                                       std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(Key(api, namespace_, name));
  if (it == groups_.end()) return std::nullopt;
  return it->second;
}

size_t PodGroupStore::size() const {
  std::lock_guard lock(mu_);
  return groups_.size();
}

}  // namespace topofit::cluster
