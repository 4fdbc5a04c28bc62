#pragma once
// GroupLookup: THE seam where topofit finds a pod's group - whether a pod is a group member, its
// group's key, and what the group asks (GroupSpec) - so that other sources of groups plug in here and
// nowhere else.
//
// Today (this class): topofit's own annotations (group_spec.h, GroupFromAnnotations), carried on the
// PodRequest (PodRequest::group, group_annotations). A pod with none of them is no member (IsMember
// false) and is placed exactly as a single pod. The Workload API PodGroup (scheduling.k8s.io/v1alpha2,
// spec.schedulingGroup.podGroupName) and the coscheduling PodGroup (scheduling.x-k8s.io/pod-group) plug
// in by overriding the three methods: a decoder adds what it read to PodRequest, a PodGroup store
// answers SpecOf through GroupFromPodGroup (a PodGroup states only the gang's minimum, so SpecOf gets
// the members seen), and ClusterModel's group members (group_members.h) must be fed under the same key.
// Errors (SpecOf): the annotations' own ("invalid topofit.io/group-size 'eight': ..."), group-*
// annotations without topofit.io/group, the pod's invalid topology annotations. Not an error: a pod of
// no group (nullopt). Stateless here; an override must be thread-safe (filters run concurrently).

#include <optional>
#include <string>

#include "base/status.h"
#include "extender/cluster/holding.h"
#include "extender/cluster/pod_intent.h"
#include "extender/groups/group_spec.h"
#include "extender/groups/network_domains.h"

namespace topofit::groups {

class GroupLookup {
 public:
  explicit GroupLookup(DomainLevels levels) : levels_(std::move(levels)) {}
  virtual ~GroupLookup() = default;

  // Cheap (every filter asks): true when the pod says anything about a group, valid or not.
  virtual bool IsMember(const cluster::PodRequest& pod) const { return !pod.group_annotations.empty(); }
  // "namespace/group"; "" when the pod names no group (its SpecOf is then an error or nullopt).
  virtual std::string KeyOf(const cluster::PodRequest& pod) const { return pod.group_key(); }
  // What the group asks, as this member states it; members_seen: the group's members the model has
  // seen, this one included.
  virtual Result<std::optional<GroupSpec>> SpecOf(const cluster::PodRequest& pod, int members_seen) const;

  const DomainLevels& levels() const { return levels_; }

  // What kube-scheduler's workload-aware preemption weighs when it would take a bound pod's GPUs: the
  // victim's priority, and its name. Here the pod alone: its own priority, "namespace/pod".
  // PodGroupLookup: for a member of a Workload API PodGroup disrupted whole (disruptionMode: PodGroup),
  // the PodGroup: its priority (0 when it states none), "PodGroup namespace/name" - as v1.36.3 builds
  // its victims (framework/preemption/types.go, newDomainForWorkloadPreemption).
  virtual int32_t VictimPriority(const cluster::Holding& h) const { return h.priority; }
  virtual std::string VictimName(const cluster::Holding& h) const { return h.pod; }

 private:
  DomainLevels levels_;
};

}  // namespace topofit::groups
