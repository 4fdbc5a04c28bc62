#pragma once
// GroupPlanner: ONE decision for a whole group of pods - the network domain, the node of each member
// and each member's exact GPU set - or why there is none.
//
// Members. The planner first tries to place all `size` members; when it cannot, `min_count` of them
// (when that is fewer). It never places a number in between: min_count is the gang's guarantee, and the
// members beyond it can come later as the group's controller creates them.
// Capacity (domain_tree.h): a node takes members while the Placer's rule finds a set for the next one
// on its free GPUs minus the sets already given - the same rule a single pod gets (placer.h), applied
// member after member; several members may share a node.
// The rule, for m members:
//   1. Where. required at level L: the domains of L. preferred at L: the domains of L if one can take
//      m members, else of the next broader used level, ..., else the whole cluster. A level no node
//      carries gives one-node domains (network_domains.h).
//   2. Which domain: among those that can take m, the one whose fill (step 3) DomainFragmentationScore
//      (domain_fragmentation.h) scores lowest - the fewest GPUs of the expected groups' room lost, at
//      every level - and among equal losses (always, when no group shape is expected), the first by
//      BestFitLess (domain_tree.h): partly used
//      before whole-free, then the least capacity, then the fewest free GPUs, then the fullest parent,
//      grandparent, ..., then the fastest first member set, then the name. The aim is the fewest whole
//      free units broken, at every level: a whole free block is what an 8-node job needs, and nothing
//      else helps it, so a group that fits in what is already broken goes there; among those, best fit
//      leaves the larger holes for larger groups, and filling the fullest parent does the same one
//      level up (small groups go where the network is busy already).
//   3. Inside it, Fill(unit, r): a node gives its first r sets. A domain: if some child can take all r,
//      Fill the first such child by the order of step 2 - the group descends into the deepest domain that holds
//      it (one rack, one NVLink domain, one node when it fits), which is also the best network for it.
//      Otherwise the members are split over the children: the partly used children are used up first,
//      largest first (by SplitLess), and a whole-free child is used only when no partly used one is left
//      - then the first for the rest by the order of step 2 - so at most one whole-free child is left partly used. This
//      costs the group more nodes than taking the largest children first would; inside one domain of
//      its level the network between them is the same, and the whole nodes kept are what the next
//      large group needs.
// What comes back: every member's node and set (sets never overlap, and are inside the node's free
// GPUs), the level and domain searched, the deepest domain holding every member, the slowest member's
// ring bandwidth; or, when no plan, the reason naming the level and the best domain's room: "no block
// can take 8 members of 8 GPUs: the best, s1/b2, has room for 5".
// Deterministic: the same nodes, map, spec and expected shapes give the same plan. The planner writes
// only to the estimate it was given (each group planned is observed, once per key); applying a plan
// (Take) changes only a GroupNodes copy.
// Thread-safe: Plan may run concurrently (the Placer and GroupShapeEstimate are).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/groups/group_nodes.h"
#include "extender/groups/group_shapes.h"
#include "extender/groups/group_spec.h"
#include "extender/groups/network_domains.h"
#include "extender/placement/placer.h"
#include "topology/gpu_set.h"

namespace topofit::groups {

struct MemberPlan {
  int node = -1;          // Index into GroupNodes::nodes (and the DomainMap).
  std::string node_name;
  GpuSet gpus;
  uint32_t ring_mbps = 0;
  bool meets_min_link = true;
};

struct GroupPlan {
  bool ok = false;
  std::vector<MemberPlan> members;  // size or min_count of them, when ok.
  int searched_level = -1;          // The level whose domains were compared; -1: the whole cluster.
  std::string searched_domain;      // The domain chosen there ("" for the whole cluster).
  // The deepest domain holding every member: a level index and its name, or, when all are on one
  // node, level == levels.size() and the node's name.
  int holding_level = -1;
  std::string holding_domain;
  uint32_t min_ring_mbps = 0;       // The slowest member's set (0 for 1-GPU members).
  std::string reason;               // !ok: why not.
  std::vector<std::string> notes;   // For explain: fallbacks taken, nodes without the level's labels.
  int gpus() const;
};

class GroupPlanner {
 public:
  // `expected`: the group shapes to keep room for (DomainFragmentationScore); each group planned is
  // observed into it first (once per key). nullptr: BestFitLess alone, as with no shape expected.
  explicit GroupPlanner(const placement::Placer& placer, GroupShapeEstimate* expected = nullptr)
      : placer_(placer), expected_(expected) {}

  // Bounds on (the default): step 2 fills a candidate only when a lower bound of its loss
  // (DomainFragmentationScore::LowerBound) says it could still win, so a plan compares a few fills
  // instead of one per block. The plan is the same either way (group_planner_bounds_test.cc);
  // off is for that test and the perftest.
  void set_bounds(bool on) { bounds_ = on; }

  GroupPlan Plan(const GroupNodes& nodes, const GroupSpec& spec) const;
  // On the model as it is now: ReadGroupNodes then Plan.
  GroupPlan Plan(const cluster::ClusterModel& model, const DomainMap& domains, const GroupSpec& spec) const;

 private:
  const placement::Placer& placer_;
  GroupShapeEstimate* expected_;
  bool bounds_ = true;
};

// Marks the members' GPUs taken in `nodes` (for replaying plans without a model), or, GiveBack, free again.
void Take(GroupNodes& nodes, std::span<const MemberPlan> members);
void Take(GroupNodes& nodes, const GroupPlan& plan);
void GiveBack(GroupNodes& nodes, std::span<const MemberPlan> members);

}  // namespace topofit::groups
