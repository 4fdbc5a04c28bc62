#pragma once
// GroupSpec: what a group of pods asks as one - how many members, how many GPUs each, how many must
// start together, and how close in the network they must (or should) be.
//
// Every member of a group asks the same: the same GPU count and intent (topofit.io/topology-policy and
// min-link, per member's set - pod_intent.h). A GroupSpec is read from one member pod, in one of two
// ways:
//   topofit's own annotations (ParseGroupAnnotations):
//     topofit.io/group            the group's name, unique in the pod's namespace; marks the pod a member
//     topofit.io/group-size       members in the group, 1..10000 (default 1)
//     topofit.io/group-min-count  members that must be placed together, 1..size (default: size)
//     topofit.io/group-level      a level of the network (network_domains.h): its name ("block") or one
//                                 of its label keys (default: the last level, the host)
//     topofit.io/group-policy     required | preferred (case-insensitive; default preferred)
//     required: every member inside one domain of that level, or no plan. preferred: inside one domain
//     of that level if any fits, else of the next broader level, ..., else anywhere in the cluster.
//   the Kubernetes objects (GroupFromPodGroup; k8s/pod_group.h decodes them): a pod's
//     spec.schedulingGroup.podGroupName naming a scheduling.k8s.io/v1alpha2 PodGroup (gang policy:
//     spec.schedulingPolicy.gang.minCount; Kubernetes 1.36, GenericWorkload gate), or the coscheduling
//     label scheduling.x-k8s.io/pod-group naming a scheduling.x-k8s.io/v1alpha1 PodGroup
//     (spec.minMember). The network level comes from topofit.io/group-level and -policy on the pod,
//     else from the PodGroup's spec.schedulingConstraints.topology key (required), else the host.
// Errors name the annotation, the value and what is accepted, like pod_intent.h: "invalid
// topofit.io/group-size 'eight': expected a whole number 1..10000". Several errors are joined by "; ".
// Not an error: a pod with none of the group annotations (it is no group member: nullopt). A pod with
// group-* annotations but no topofit.io/group is an error (the rest would be silently ignored).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "extender/cluster/pod_intent.h"
#include "extender/groups/network_domains.h"
#include "extender/k8s/objects.h"

namespace topofit::groups {

inline constexpr const char* kGroupAnnotation = k8s::kGroupAnnotation;
inline constexpr const char* kGroupSizeAnnotation = "topofit.io/group-size";
inline constexpr const char* kGroupMinCountAnnotation = "topofit.io/group-min-count";
inline constexpr const char* kGroupLevelAnnotation = "topofit.io/group-level";
inline constexpr const char* kGroupPolicyAnnotation = "topofit.io/group-policy";
inline constexpr int kMaxGroupSize = 10000;

enum class LevelPolicy : uint8_t { kRequired, kPreferred };
std::string_view ToString(LevelPolicy policy);  // "required", "preferred"

struct GroupSpec {
  std::string namespace_;
  std::string name;
  int size = 1;              // Members.
  int min_count = 1;         // Members that must be placed together (1..size).
  int gpus = 0;              // Per member.
  cluster::PodIntent intent; // Per member's GPU set.
  int level = 0;             // Index into the DomainLevels the spec was read with.
  LevelPolicy policy = LevelPolicy::kPreferred;
  // The priority kube-scheduler preempts lower pods with for the group: a Workload API PodGroup's
  // spec.priority (workload-aware preemption compares it), else the member pod's own (preemption pod by
  // pod, the gate off; with it on, a PodGroup without one has 0, and the plan that assumed more fails
  // kube-scheduler's trial harmlessly).
  int32_t priority = 0;
  std::string key() const { return namespace_ + "/" + name; }
  friend bool operator==(const GroupSpec&, const GroupSpec&) = default;
};

// The group annotations alone: nullopt when the pod carries none of them.
struct GroupAnnotations {
  std::string name;
  int size = 1;
  std::optional<int> min_count;
  int level = 0;
  LevelPolicy policy = LevelPolicy::kPreferred;
  friend bool operator==(const GroupAnnotations&, const GroupAnnotations&) = default;
};
Result<std::optional<GroupAnnotations>> ParseGroupAnnotations(const std::map<std::string, std::string>& annotations,
                                                              const DomainLevels& levels);

// The member's GroupSpec from topofit's annotations: nullopt when the pod is no group member; the
// pod's own invalid topology annotations (PodRequest::error) are an error here too.
Result<std::optional<GroupSpec>> GroupFromAnnotations(const cluster::PodRequest& member,
                                                      const std::map<std::string, std::string>& annotations,
                                                      const DomainLevels& levels);

// The member's GroupSpec from its PodGroup: size = max(min_count, members_seen) (a PodGroup states no
// total, only the gang's minimum); a basic-policy PodGroup is a group of min_count 1. The level and
// policy come from the member's topofit.io/group-level and -policy; without group-level, a Workload
// PodGroup's topology key is the level (one of its label keys, network_domains.h), required.
// Errors: the PodGroup is not the one the pod names; min_count < 1 for a gang or more than 10000
// ("PodGroup ml/t: spec.minMember 0 is not 1..10000"); a topology key that is no level's label;
// topofit.io/group naming another group, or -size / -min-count (the PodGroup states the members); and
// the annotation errors above.
Result<GroupSpec> GroupFromPodGroup(const cluster::PodRequest& member, const k8s::WorkloadGroupRef& ref,
                                    const k8s::PodGroupObject& group, int members_seen,
                                    const std::map<std::string, std::string>& annotations,
                                    const DomainLevels& levels);

}  // namespace topofit::groups
