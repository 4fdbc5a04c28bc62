#pragma once
// DomainTree: one group's view of the cluster for one plan - the hierarchy of the network levels over
// the nodes, and how many of the group's members each node and each domain can take.
//
// Units: the root (the whole cluster), one unit per domain of each used level (the chain, broadest
// first; a level no node carries is not in it), and one leaf per node. Children are in name order.
// Capacity of a node: the members it can take when they get GPU sets one after another by the
// Placer's rule (Placer::Choose on the free GPUs minus the sets given before), at most max_members;
// the sets are kept, and a plan gives exactly these. Capacity of a domain: the sum over its nodes.
// A unit is whole-free when it has GPUs and none is held. BestFitLess is THE order in which the planner
// prefers one unit to another among those that fit (group_planner.h gives the reasons):
//   1. not whole-free before whole-free  2. less capacity  3. fewer free GPUs  4. fewer free GPUs in the
//   parent, then the grandparent, ...  5. a faster first member set (ring bandwidth)  6. the name.
// SplitLess is the order in which a domain's children are used up when none can take the rest alone:
//   1. not whole-free first  2. more capacity  3. then as BestFitLess.
// Cost: nodes x members Placer calls (memoised by the Placer) and a pass over the map per level.
// A value built for one plan; not shared between threads.

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "extender/cluster/pod_intent.h"
#include "extender/groups/group_nodes.h"
#include "extender/placement/placer.h"

namespace topofit::groups {

struct TreeUnit {
  int depth = 0;        // 0 root, 1..chain().size() the chain's levels, chain().size() + 1 the nodes.
  int level = -1;       // Index into DomainLevels; -1 for the root and the leaves.
  std::string name;     // Domain path ("s1/b2"), node name, or "" for the root.
  int parent = -1;
  std::vector<int> children;
  int capacity = 0;     // Members it can take.
  int free_gpus = 0;
  int usable_gpus = 0;
  uint32_t best_ring = 0;  // The fastest first-member set among its nodes (MB/s; 0 for 1-GPU members).
  int node = -1;        // Leaves: index into GroupNodes::nodes.
  std::span<const placement::PlacerChoice> sets;  // Leaves: the sets members get, in order (capacity of
                                                  // them); owned by the tree, shared by equal nodes.
  bool whole_free() const { return usable_gpus > 0 && free_gpus == usable_gpus; }
};

class DomainTree {
 public:
  DomainTree(const GroupNodes& nodes, const placement::Placer& placer, int gpus, const cluster::PodIntent& intent,
             int max_members);
  DomainTree(const DomainTree&) = delete;  // Leaves' sets point into the tree's own storage.
  DomainTree& operator=(const DomainTree&) = delete;

  const std::vector<int>& chain() const { return chain_; }
  const TreeUnit& unit(int i) const { return units_[i]; }
  int size() const { return static_cast<int>(units_.size()); }
  static constexpr int kRoot = 0;
  // The units that are the domains of `level`: the chain's units when the level is used, else the
  // leaves (a level nobody carries makes every node a domain of its own).
  std::vector<int> UnitsAt(int level) const;
  bool IsLeaf(int u) const { return units_[u].node >= 0; }
  // The order of preference among units of one depth (see above).
  bool BestFitLess(int a, int b) const;
  bool SplitLess(int a, int b) const;

 private:
  int AddUnit(int depth, int level, std::string name, int parent);
  std::vector<int> chain_;
  std::vector<TreeUnit> units_;
  std::vector<int> leaves_;                // Unit of node i.
  std::vector<std::vector<int>> by_depth_;  // Units of each depth.
  std::deque<std::vector<placement::PlacerChoice>> sets_;  // What the leaves' sets point into.
};

}  // namespace topofit::groups
