#pragma once
// DomainFragmentationScore: the FragmentationGradient idea (placement/score_plugins.h) carried from a
// node's GPUs to whole nodes in a rack and whole racks in a block - a score plugin for group plans,
// shaped like kube-scheduler's framework: Name(), PreScore once per plan, Score per candidate.
//
// The workload is the group half of the workload estimate (group_shapes.h): shapes g with share p_g,
// m_g members of k_g GPUs, asked at level L_g. On the GroupNodes of one moment:
//   room_g(n)  = floor(free GPUs of node n / k_g)           members of g node n can take (any k_g free
//                                                          GPUs: the estimate keeps no min-link)
//   fits_g(D)  = floor(sum_{n in D} room_g(n) / m_g)       whole groups of g a domain D of L_g holds
//                                                          (a level no node carries: D is one node)
//   frag_g     = sum_{D at L_g} (free(D) - m_g k_g fits_g(D))   free GPUs no group of g can use
//   Score(P)   = sum_g p_g m_g k_g sum_D (fits_g(D) before P - fits_g(D) after P)     (the loss, >= 0)
// A placement P taking T GPUs changes the expected frag sum_g p_g frag_g by exactly Score(P) - T, so
// among the plans of one group (or one pod: a group of one member) - all taking the same T - the
// least Score is FGD's least fragmentation gradient, at every level at once: a member on a whole free
// node costs the 8-GPU jobs expected, one node off a block with exactly 8 whole free nodes costs the
// 8-node jobs expected, and a member on a node that is already broken costs nothing.
// With no shape (no group seen) Score is 0 everywhere and the planner's order alone decides: a cluster
// without groups is placed exactly as before.
// Cost: PreScore reads every node once per shape; Score is O(shapes x takes of P), without sorting,
// and without allocating once warm.
// Not errors: a take of more GPUs than a node has free counts the node empty; nodes outside the map
// are ignored. A value built for one plan; not shared between threads.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "extender/groups/group_nodes.h"
#include "extender/groups/group_shapes.h"

namespace topofit::groups {

// GPUs a placement takes on one node (index into GroupNodes::nodes).
struct NodeTake {
  int node = -1;
  int gpus = 0;
};

class DomainFragmentationScore {
 public:
  std::string_view Name() const { return "DomainFragmentation"; }
  // The room of every domain for every shape on `nodes` now (shapes at levels outside the map are
  // dropped).
  void PreScore(const GroupNodes& nodes, const GroupShapeSnapshot& shapes);
  // Whether some shape is expected; false: Score is 0 everywhere.
  bool enabled() const { return !shapes_.empty(); }
  // As if PreScore had seen `free` usable GPUs free on `node` (its domains unchanged): every shape's
  // room in the node's domains moves by the node's change, O(shapes). Not an error: a node outside
  // the map (nothing changes).
  void SetFree(int node, int free);
  int free(int node) const { return node >= 0 && static_cast<size_t>(node) < free_.size() ? free_[node] : 0; }
  // The loss of taking `takes` (the same node may appear more than once), in GPUs.
  double Score(std::span<const NodeTake> takes) const;
  // The same for one take: Score({{node, gpus}}), without the merging.
  double ScoreNode(int node, int gpus) const;
  // Sorts the nodes into classes that score alike: the same domain at every level a shape asks whose
  // domains hold more than one node (a one-node domain's room follows from the node's free GPUs).
  // O(nodes x levels); kept until the next PreScore (SetFree changes no class).
  void ClassifyNodes();
  // out[i] = ScoreNode(nodes[i], gpus) for each i, each value computed once per class and free GPUs
  // after ClassifyNodes (before it, or with more classes than nodes asked, once per node): a band of
  // thousands of nodes in a few hundred blocks costs a few hundred ScoreNodes. A node < 0 scores 0.
  void ScoreNodes(std::span<const int> nodes, int gpus, std::span<double> out) const;

  // Bounds, so that a planner need not fill every candidate domain to compare losses.
  // shape_count(): how many shapes Slack and LowerBound index.
  size_t shape_count() const { return shapes_.size(); }
  // Adds to slack[s], for each shape s, the GPUs `node` can give without losing room for s (its free
  // GPUs mod s's GPUs per member). slack has shape_count() entries.
  void AddSlack(int node, std::span<int> slack) const;
  // A lower bound of Score for any takes of `gpus` GPUs in all from a set of nodes whose summed slack
  // is `slack`, all in one domain of every level up to `level` (an index into the levels; -1: none),
  // `node` one of them: for each shape at such a level, the room it must lose in that domain is at
  // least ceil((gpus - slack) / its GPUs per member); shapes at deeper levels, or at a level no node
  // carries, count 0.
  double LowerBound(int node, int level, std::span<const int> slack, int gpus) const;

 private:
  struct Shape {
    int members = 0, gpus = 0, level = 0;
    bool by_node = false;      // Its level is carried by no node: every node a domain of its own.
    double weight = 0;         // p_g m_g k_g
    std::vector<int> room;     // Per domain of the level: sum of room_g(n).
    std::vector<int> room_of_free;  // room_g of a node with f free GPUs, f up to the most any node has.
    std::vector<int> spare;    // Per domain: room mod m_g (empty when m_g is 1: always 0).
  };
  // The loss for shape s of `lost` members' room taken in domain d (no division on the common paths).
  static double Lost(const Shape& s, int d, int lost);
  // Members' room of s a node with `before` free GPUs loses when `gpus` of them are taken.
  static int RoomLost(const Shape& s, int before, int gpus);
  double ShapeLoss(const Shape& s, std::span<const NodeTake> per_node) const;
  std::vector<int> free_;      // Per node: free usable GPUs.
  int max_free_ = 0;           // The most free GPUs any node had at PreScore.
  std::vector<int> class_;     // Per node after ClassifyNodes (empty before): its class.
  int classes_ = 0;
  std::vector<std::vector<int>> domain_;  // Per level a shape asks: each node's domain there.
  std::vector<Shape> shapes_;
  // Score's scratch, all zero between calls: GPUs taken per node, room lost per domain.
  mutable std::vector<int> taken_;
  mutable std::vector<int> lost_;
  mutable std::vector<NodeTake> per_node_;
  mutable std::vector<int> touched_;
};

}  // namespace topofit::groups
