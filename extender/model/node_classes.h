#pragma once
// NodeClasses: groups the nodes of one request by the state that plugins may read, so that a
// 5,000-node filter or prioritize evaluates each distinct state once. In a real cluster most nodes
// are empty, full, or in a handful of shapes; where every node differs it costs one hash per node.
//
// The contract that makes this sound is in plugin.h: filter plugins read only a node's GPU state
// (topology, usable, free), score plugins that plus its CPU and memory (allocatable and used),
// never its name. Within one cycle, nodes with equal keys get equal verdicts, candidates and scores.
//
// Not thread-safe; one object per request. The views handed to Classify must outlive it.

#include <cstdint>
#include <span>
#include <vector>

#include "extender/model/plugin.h"

namespace topofit::model {

// What a plugin may read of a node. `resources` false: the GPU part only (filtering).
struct NodeKey {
  const Topology* topology = nullptr;
  uint64_t usable = 0, free = 0;
  NodeResources allocatable;
  int64_t used_cpu_milli = 0, used_memory_bytes = 0;

  static NodeKey Of(const NodeView& v, bool resources);
  uint64_t Hash() const;
  friend bool operator==(const NodeKey&, const NodeKey&) = default;
};

class NodeClasses {
 public:
  // max_nodes: how many nodes will be classified (sizes the table so it need not grow).
  NodeClasses(size_t max_nodes, bool resources);

  // The class of `v`, an index into views(); the first node of a state becomes its representative.
  uint32_t Classify(const NodeView& v);
  // One node per distinct state, in order of first appearance.
  std::span<const NodeView> views() const { return views_; }
  size_t size() const { return views_.size(); }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  void Grow();
  const bool resources_;
  std::vector<NodeKey> keys_;
  std::vector<NodeView> views_;
  std::vector<uint32_t> table_;  // Open addressing over class indices; at most half full.
  uint64_t mask_ = 0;
};

}  // namespace topofit::model
