#pragma once
// DomainMapCache: the cluster's DomainMap (network_domains.h), rebuilt from the model's nodes only
// when they changed (ClusterModel::node_generation: a node added, deleted, or its labels changed), so
// that what reads the map on every call - a group's plan, a pod's domain loss (domain_loss.h) - does
// not copy every node's labels each time.
// Get() takes no lock of the model's while a fresh map is not needed; when one is, it calls
// ClusterModel::Nodes(), so it must not be called while a ClusterModel::Reader is held. Its own mutex
// is never held while the model's lock is taken (Peek is called under a Reader).
// Thread-safe; a map handed out stays valid (and immutable) for as long as its holder keeps it.

#include <cstdint>
#include <memory>
#include <mutex>

#include "extender/cluster/cluster_model.h"
#include "extender/groups/network_domains.h"

namespace topofit::groups {

class DomainMapCache {
 public:
  // `model` must outlive this.
  DomainMapCache(const cluster::ClusterModel& model, DomainLevels levels)
      : model_(model), levels_(std::move(levels)) {}

  // The map of the model's nodes as of this call (or of a later node change).
  std::shared_ptr<const DomainMap> Get() const;
  // The last map Get() built, never rebuilding (safe while a Reader is held); nullptr before the first
  // Get(). It may miss the nodes changed since.
  std::shared_ptr<const DomainMap> Peek() const;
  const DomainLevels& levels() const { return levels_; }
  const cluster::ClusterModel& model() const { return model_; }

 private:
  const cluster::ClusterModel& model_;
  const DomainLevels levels_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const DomainMap> map_;
  mutable uint64_t generation_ = 0;  // Of map_, read before map_ was built.
};

}  // namespace topofit::groups
