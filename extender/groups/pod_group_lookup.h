#pragma once
// PodGroupLookup: the GroupLookup (group_lookup.h) of `topofit serve` - a pod's group from its PodGroup
// (k8s/pod_group.h: the Workload API's spec.schedulingGroup.podGroupName, else the coscheduling label
// scheduling.x-k8s.io/pod-group), found in the PodGroupStore the watches (or a snapshot) fill, and
// otherwise from topofit's own annotations exactly as GroupLookup reads them.
//
// IsMember: the pod names a PodGroup, or carries group annotations. KeyOf: "namespace/name" of the
// group k8s::GroupNameOf picks (the same key the model counts its members under). SpecOf: for a
// PodGroup member, GroupFromPodGroup (group_spec.h) on the stored PodGroup and the members seen.
// Errors (the member is held with them): "PodGroup ml/train not found yet" (not created, or not
// watched yet: held until it is; the coscheduling one says "PodGroup ray/g (scheduling.x-k8s.io) not
// found yet"), and GroupFromPodGroup's. Thread-safe (the store is; this holds no state of its own).

#include "extender/cluster/pod_group_store.h"
#include "extender/groups/group_lookup.h"

namespace topofit::groups {

class PodGroupLookup final : public GroupLookup {
 public:
  // `store` must outlive this.
  PodGroupLookup(DomainLevels levels, const cluster::PodGroupStore& store)
      : GroupLookup(std::move(levels)), store_(store) {}

  bool IsMember(const cluster::PodRequest& pod) const override {
    return GroupLookup::IsMember(pod) || !pod.group_ref.empty();
  }
  Result<std::optional<GroupSpec>> SpecOf(const cluster::PodRequest& pod, int members_seen) const override;
  int32_t VictimPriority(const cluster::Holding& h) const override;
  std::string VictimName(const cluster::Holding& h) const override;

 private:
  // The Workload API PodGroup `h`'s pod names, when it is disrupted whole.
  std::optional<k8s::PodGroupObject> DisruptedWhole(const cluster::Holding& h) const;

  const cluster::PodGroupStore& store_;
};

}  // namespace topofit::groups
