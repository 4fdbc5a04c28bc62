#include "extender/groups/domain_map_cache.h"

namespace topofit::groups {

std::shared_ptr<const DomainMap> DomainMapCache::Get() const {
  // The generation is read before the nodes: a change after it leaves a newer map under an older
  // generation, which the next call rebuilds - never an older map under a newer one.
  const uint64_t now = model_.node_generation();
  {
    std::lock_guard lock(mu_);
    if (map_ && generation_ == now) return map_;
  }
  // Built without mu_: Peek is called with the model's Reader held, so mu_ is never held while the
  // model's lock is taken (two callers may both build; the newer generation is kept).
  auto fresh = std::make_shared<const DomainMap>(DomainMap::FromModel(model_, levels_));
  std::lock_guard lock(mu_);
  if (!map_ || generation_ <= now) {
    map_ = std::move(fresh);
    generation_ = now;
  }
  return map_;
}

std::shared_ptr<const DomainMap> DomainMapCache::Peek() const {
  std::lock_guard lock(mu_);
  return map_;
}

}  // namespace topofit::groups
