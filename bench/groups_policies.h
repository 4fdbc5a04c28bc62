#pragma once
// Ways of placing a group of pods that the groups replay compares (groups_replay.h): topofit's
// GroupPlanner, and three baselines written from their projects' documented rules. All four give each
// member its GPUs by the same rule (the Placer's set, member after member on a node), so what differs
// is the gang, the domain and the nodes.
//
//   topofit        GroupPlanner::Plan (extender/groups/group_planner.h), learning the group shapes
//                  of the arrivals as it goes (DomainFragmentationScore).
//   no-gang        kube-scheduler alone: members one by one, each to the node with the most free GPUs
//                  (LeastAllocated, the default NodeResourcesFit strategy, scoring GPUs), ties by name;
//                  no domain. The members placed before one fails keep their GPUs: partly placed.
//   kueue-bestfit  Kueue TAS with its BestFit algorithm (KEP-2724, "Computing the assignment"): capacity
//                  in pods per node, summed (Kueue counts free GPUs / GPUs per pod; counted here by the
//                  Placer's rule, the same number for the replay's best-effort members). required: the
//                  domain of the level with the least capacity that fits; preferred: the same at the
//                  level, then each broader level, then spread over the cluster; inside, children by
//                  capacity, largest first, the last one the smallest that fits the rest. Ties by name.
//   volcano-tier   Volcano network-topology-aware scheduling (hard mode, highestTierAllowed = the
//                  group's level): the lowest tier first, host upwards; in a tier the first domain by
//                  name that fits (Volcano scores hypernodes with plugins; none is configured here, and
//                  Volcano breaks equal scores at random); inside, nodes first fit by name. Soft mode
//                  (preferred) goes on up to the whole cluster.
// Pods of no group (GroupArrival::single) go through PlacePod: kube-scheduler's in every baseline
// (Kueue's and Volcano's gangs and domains are for groups). no-gang places such a pod by its default
// profile (LeastAllocated, as it places a member); kueue-bestfit and volcano-tier by a bin-packing
// profile (MostAllocated on GPUs, ties at random) - the better of the two for keeping whole nodes
// whole, given to the gang baselines. topofit places it as `topofit serve` answers kube-scheduler for
// it: Pipeline::Prioritize on every node (FragmentationGradient, the tie-break rule and the domain
// loss of the group shapes it has learned, groups/domain_loss.h), then one of the nodes scored 10 at
// random (kube-scheduler's in-tree scores being equal), the Placer's set there. It runs on a mirror of the replay's nodes (a
// ClusterModel of the same shape whose held GPUs are synchronised before each pod), so it needs the
// ClusterShape; without one it places such pods as kube-scheduler alone.
// Contract: Place returns the members placed, each on a node with a set inside its free GPUs and no two
// sets overlapping; a gang policy returns size or min_count members or none. Only topofit keeps state
// between calls: the group shapes it has seen (group_shapes.h), as topofit serve does; Start() begins
// a new replay and forgets them.

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/groups_workload.h"
#include "extender/groups/group_nodes.h"
#include "extender/groups/group_planner.h"
#include "extender/groups/group_shapes.h"
#include "extender/groups/group_spec.h"
#include "extender/placement/placer.h"

namespace topofit::bench {

class GroupPolicy {
 public:
  virtual ~GroupPolicy() = default;
  virtual std::string name() const = 0;
  // Whether Place gives all of a group (or min_count) or nothing; false: no-gang, member by member.
  virtual bool gang() const { return true; }
  virtual void Start() {}
  virtual std::vector<groups::MemberPlan> Place(const groups::GroupNodes& nodes, const groups::GroupSpec& spec) = 0;
  // A pod of no group (one member, spec.gpus GPUs): see above.
  virtual std::vector<groups::MemberPlan> PlacePod(const groups::GroupNodes& nodes, const groups::GroupSpec& spec) = 0;
};

// kube-scheduler with a bin-packing profile (MostAllocated on GPUs), for one pod: the node with the fewest
// free GPUs that has a set, ties at random (as kube-scheduler breaks equal scores) with `rng`.
std::vector<groups::MemberPlan> MostAllocated(const placement::Placer& placer, const groups::GroupNodes& nodes,
                                              const groups::GroupSpec& spec, std::mt19937_64& rng);
// kube-scheduler alone: `spec.size` members one by one, each to the node with the most free GPUs
// (LeastAllocated on GPUs) that has a set, ties by name; stops at the first that fits nowhere.
std::vector<groups::MemberPlan> LeastAllocated(const placement::Placer& placer, const groups::GroupNodes& nodes,
                                               const groups::GroupSpec& spec);

// Every policy above, in the order listed; `placer` must outlive them. `expected`: how topofit's
// estimate of group shapes learns (its half-life: the procedure of docs/groups.md sweeps it).
// `shape`: the replay's cluster, for topofit's pods of no group (nullptr: placed as kube-scheduler alone);
// `pod_domain_loss`: whether topofit orders them by the domain loss (scoring.domainLoss).
std::vector<std::unique_ptr<GroupPolicy>> AllGroupPolicies(const placement::Placer& placer,
                                                          groups::GroupShapeOptions expected = {},
                                                          const ClusterShape* shape = nullptr,
                                                          bool pod_domain_loss = true);

}  // namespace topofit::bench
