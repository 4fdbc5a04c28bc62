#pragma once
// ScoredPolicy: the shape of every baseline - score each feasible node, take the highest, break ties
// at random as kube-scheduler's selectHost does (reservoir sampling over the top-scoring nodes), then
// let the stock NVIDIA device plugin pick the GPUs on that node (DevicePluginAllocator; on a node whose
// GPUs are shared, DevicePluginSharedChoice with the policy's random stream for its ties) - or, on a
// DRA-backed node (SimNode::dra), kube-scheduler's DRA allocator (DraFirstFit).
//
// Subclasses only define Score(). Scores are int64 like kube-scheduler's framework scores, so the
// truncation that creates ties upstream creates the same ties here.

#include <memory>
#include <random>
#include <vector>

#include "bench/device_plugin_alloc.h"
#include "bench/policy.h"

namespace topofit::bench {

class ScoredPolicy : public Policy {
 public:
  Status Reset(const SimCluster& cluster, uint64_t seed) override;
  Placement Place(const SimCluster& cluster, const PodSpec& pod, std::span<const int> feasible) override;

 protected:
  virtual int64_t Score(const SimCluster& cluster, const SimNode& node, const PodSpec& pod) = 0;
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<DevicePluginAllocator>> allocators_;  // per NodeType
};

}  // namespace topofit::bench
