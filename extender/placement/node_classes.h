#pragma once
// NodeClasses: groups the nodes of one request by GPU state, so that a 5,000-node filter or
// prioritize evaluates each distinct state once. In a real cluster most nodes are empty, full, or in
// a handful of shapes; a busy cluster has a few hundred GPU states; where every node differs it
// costs one hash per node.
//
// The contract that makes this sound is in plugin.h: filter plugins read only a node's GPU state
// (NodeKey: topology, usable, free, GPU model), score plugins that plus its CPU and memory (ResourceKey)
// unless they say otherwise, never its name. Within one cycle, nodes with equal keys get equal
// verdicts, candidates and scores.
//
// Not thread-safe; one object per request. The views handed to Classify must outlive it.

#include <cstdint>
#include <span>
#include <vector>

#include "extender/placement/plugin.h"

namespace topofit::placement {

// A node's GPU state: all that filter plugins and GPU-only score plugins may read of it.
struct NodeKey {
  const Topology* topology = nullptr;
  uint64_t usable = 0, free = 0;
  uint32_t product = 0;  // NodeState::product_id(): the workload's GPU-model constraints read it.
  uint64_t order = 0;    // SetOrderOf: a DRA node's allocator order (or the pod's ask there) decides its set.

  static NodeKey Of(const NodeView& v, const cluster::DraPodAsk* ask = nullptr) {
    return {v.topology(), v.usable().mask(), v.free.mask(), v.node->product_id(), SetOrderOf(v, ask)};
  }
  uint64_t Hash() const;
  friend bool operator==(const NodeKey&, const NodeKey&) = default;
};

// What score plugins with ReadsResources() read of a node beyond its GPU state.
struct ResourceKey {
  cluster::NodeResources allocatable;
  int64_t used_cpu_milli = 0, used_memory_bytes = 0;

  static ResourceKey Of(const cluster::NodeState& n) { return {n.allocatable(), n.used_cpu_milli(), n.used_memory_bytes()}; }
  friend bool operator==(const ResourceKey&, const ResourceKey&) = default;
};

class NodeClasses {
 public:
  // max_nodes: how many nodes will be classified (sizes the table so it need not grow).
  // ask: the pod's DraPodAsk, if any (nodes with different asks are different states).
  explicit NodeClasses(size_t max_nodes, const cluster::DraPodAsk* ask = nullptr);

  // The class of `v` by its NodeKey, an index into views(); the first node of a state becomes its
  // representative.
  uint32_t Classify(const NodeView& v);
  // One node per distinct state, in order of first appearance.
  std::span<const NodeView> views() const { return views_; }
  size_t size() const { return views_.size(); }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  void Grow();
  const cluster::DraPodAsk* ask_;
  std::vector<NodeKey> keys_;
  std::vector<NodeView> views_;
  std::vector<uint32_t> table_;  // Open addressing over class indices; at most half full.
  uint64_t mask_ = 0;
};

}  // namespace topofit::placement
