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
//   the Kubernetes objects (GroupFromPodGroup): a pod's spec.schedulingGroup.podGroupName naming a
//     scheduling.k8s.io/v1alpha2 PodGroup (gang policy: spec.schedulingPolicy.gang.minCount; Kubernetes
//     1.35+, GenericWorkload gate), or the coscheduling label scheduling.x-k8s.io/pod-group naming a
//     scheduling.x-k8s.io/v1alpha1 PodGroup (spec.minMember). WorkloadGroupRef and PodGroupObject are
//     what the decoders would fill; no decoder fills them yet (docs/groups.md). The network level then
//     still comes from topofit.io/group-level and -policy on the pod.
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
// The coscheduling plugin's label (kubernetes-sigs/scheduler-plugins).
inline constexpr const char* kCoschedulingPodGroupLabel = "scheduling.x-k8s.io/pod-group";
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

// ---- The Kubernetes objects, as decoders would fill them ----

// On a member pod.
struct WorkloadGroupRef {
  std::string pod_group_name;          // spec.schedulingGroup.podGroupName (scheduling.k8s.io/v1alpha2)
  std::string coscheduling_pod_group;  // label scheduling.x-k8s.io/pod-group
  bool empty() const { return pod_group_name.empty() && coscheduling_pod_group.empty(); }
};

// A PodGroup: scheduling.k8s.io/v1alpha2 (Workload API) or scheduling.x-k8s.io/v1alpha1 (coscheduling).
struct PodGroupObject {
  enum class Api : uint8_t { kWorkload, kCoscheduling };
  enum class Policy : uint8_t { kBasic, kGang };
  Api api = Api::kWorkload;
  std::string namespace_;
  std::string name;
  Policy policy = Policy::kGang;  // Coscheduling PodGroups are always gangs.
  int32_t min_count = 0;          // spec.schedulingPolicy.gang.minCount / spec.minMember
};

// The member's GroupSpec from its PodGroup: size = max(min_count, members_seen) (a PodGroup states no
// total, only the gang's minimum); a basic-policy PodGroup is a group of min_count 1. The level and
// policy come from the member's topofit.io/group-level and -policy (other group annotations are
// ignored). Errors: the PodGroup is not the one the pod names, min_count < 1 for a gang, and the
// annotation errors above.
Result<GroupSpec> GroupFromPodGroup(const cluster::PodRequest& member, const WorkloadGroupRef& ref,
                                    const PodGroupObject& group, int members_seen,
                                    const std::map<std::string, std::string>& annotations,
                                    const DomainLevels& levels);

}  // namespace topofit::groups
