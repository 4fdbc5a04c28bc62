#pragma once
// What a group could have if kube-scheduler preempted pods of lower priority for it.
//
// kube-scheduler's workload-aware preemption (v1.36, alpha; framework/preemption/podgrouppreemption.go)
// never calls an extender's preempt verb: it removes every pod of lower priority than the group from its
// snapshot, runs the group's cycle again - calling the extenders' filter, which cannot know that the
// pods are only gone in that snapshot - and, if the group fits, gives back the victims one at a time
// while it still fits, then deletes the rest. A group planned on the free GPUs alone would therefore
// never pass that trial. GroupCoordinator plans such a group a second time on these nodes and leads
// each member to its slot there, reserving nothing (group_coordinator.h, step 3).
//
// A pod's priority here is its victim's, as `lookup` says (GroupLookup::VictimPriority): the pod's own, or,
// for a member of a PodGroup disrupted whole, the PodGroup's - the priority kube-scheduler compares.
// PreemptibleGpus: the pods of priority below `priority` on the nodes of `domains` that preemption can
//   take - bound pods and binds confirmed, whatever their state on the node; never a reservation (a
//   bind in flight, another group's slots) - read once through `reader`, with the nodes' free GPUs.
//   tiers(): where to cut, lowest first - the distinct priorities of those pods, each + 1, at most
//   kMaxPreemptionTiers of them, spread evenly and always ending with `priority` itself (all of
//   them); empty when no pod is below `priority`. A plan is tried tier by tier, so a group preempts
//   the least important pods that make room for it - kube-scheduler's first rule when it picks a node
//   for a preemptor (the lowest highest-priority victim).
//   IfPreempted(tier): the nodes as read (ReadGroupNodes), with the GPUs of those pods of priority
//   below `tier` counted free as well.
// Preempted: the victims of priority below `priority` whose GPUs a member's set overlaps, in the order
//   of the members, each once (GroupLookup::VictimName: "namespace/name", or "PodGroup namespace/name", which
//   kube-scheduler preempts whole, its members elsewhere too). Not an error: a member on a node the
//   model no longer knows (nothing there to preempt).

#include <span>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/groups/group_lookup.h"
#include "extender/groups/group_nodes.h"
#include "extender/groups/group_planner.h"

namespace topofit::groups {

inline constexpr size_t kMaxPreemptionTiers = 8;

class PreemptibleGpus {
 public:
  // `domains` must outlive this.
  PreemptibleGpus(const cluster::ClusterModel::Reader& reader, const DomainMap& domains, int32_t priority,
                  const GroupLookup& lookup);
  const std::vector<int32_t>& tiers() const { return tiers_; }
  GroupNodes IfPreempted(int32_t tier) const;

 private:
  struct Pod {
    int32_t priority = 0;
    GpuSet gpus;
  };
  GroupNodes nodes_;
  std::vector<std::vector<Pod>> pods_;  // Per map index.
  std::vector<int32_t> tiers_;
};

std::vector<std::string> Preempted(const cluster::ClusterModel::Reader& reader, std::span<const MemberPlan> members,
                                   int32_t priority, const GroupLookup& lookup);

}  // namespace topofit::groups
