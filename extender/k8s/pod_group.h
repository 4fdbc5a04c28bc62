#pragma once
// PodGroups: the Kubernetes objects that make pods one group (a gang), as topofit reads them, and the
// reference a member pod carries - field names as Kubernetes v1.36.3 and scheduler-plugins define them.
//
//   Workload API (scheduling.k8s.io/v1alpha2, kube-apiserver --runtime-config=scheduling.k8s.io/v1alpha2=true,
//   gates GenericWorkload and GangScheduling): a PodGroup with spec.schedulingPolicy.gang.minCount (a
//   gang) or spec.schedulingPolicy.basic (no gang: min count 1), and optionally
//   spec.schedulingConstraints.topology[0].key (a node label all members share); a member pod names it
//   in spec.schedulingGroup.podGroupName (which replaced v1.35's spec.workloadRef).
//   Coscheduling (scheduler-plugins, CRD podgroups.scheduling.x-k8s.io, v1alpha1): a PodGroup with
//   spec.minMember; a member pod carries the label scheduling.x-k8s.io/pod-group: NAME (KubeRay and
//   the Kubeflow trainer create both).
//
// object_decoder.h's DecodePodGroup reads either from JSON.
//
// GroupNameOf: which group a pod is a member of, by the one rule every part uses (the model counting
// members, the verbs keying groups): spec.schedulingGroup.podGroupName, else the coscheduling label,
// else topofit's own topofit.io/group annotation; "" for a pod of no group.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>


namespace topofit::k8s {

inline constexpr const char* kWorkloadPodGroupApiVersion = "scheduling.k8s.io/v1alpha2";
inline constexpr const char* kCoschedulingPodGroupApiVersion = "scheduling.x-k8s.io/v1alpha1";
// The coscheduling plugin's label on a member pod (kubernetes-sigs/scheduler-plugins).
inline constexpr const char* kCoschedulingPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// On a member pod: the PodGroup it names, by either API ("" when it names none).
struct WorkloadGroupRef {
  std::string pod_group_name;          // spec.schedulingGroup.podGroupName (scheduling.k8s.io/v1alpha2)
  std::string coscheduling_pod_group;  // label scheduling.x-k8s.io/pod-group
  bool empty() const { return pod_group_name.empty() && coscheduling_pod_group.empty(); }
  friend bool operator==(const WorkloadGroupRef&, const WorkloadGroupRef&) = default;
};

// A PodGroup: scheduling.k8s.io/v1alpha2 (Workload API) or scheduling.x-k8s.io/v1alpha1 (coscheduling).
struct PodGroupObject {
  enum class Api : uint8_t { kWorkload, kCoscheduling };
  enum class Policy : uint8_t { kBasic, kGang };
  Api api = Api::kWorkload;
  std::string namespace_;
  std::string name;
  std::string uid;
  Policy policy = Policy::kGang;  // Coscheduling PodGroups are always gangs.
  int32_t min_count = 0;          // spec.schedulingPolicy.gang.minCount / spec.minMember
  std::string topology_key;       // spec.schedulingConstraints.topology[0].key (Workload API); "" for none
  // spec.priority (Workload API, gate WorkloadAwarePreemption; kube-apiserver sets it from
  // spec.priorityClassName): the priority kube-scheduler's workload-aware preemption gives the whole
  // group (0 there when absent: its util.PodGroupPriority).
  std::optional<int32_t> priority;
  // spec.disruptionMode == "PodGroup" (Workload API, gate WorkloadAwarePreemption): kube-scheduler's
  // workload-aware preemption takes the group's pods as one victim, of the group's priority, and
  // preempts all of them or none. "Pod" or absent: each pod is a victim of its own priority.
  bool disrupted_whole = false;
  std::string key() const { return namespace_ + "/" + name; }
  friend bool operator==(const PodGroupObject&, const PodGroupObject&) = default;
};

std::string_view ToString(PodGroupObject::Api api);  // "scheduling.k8s.io", "scheduling.x-k8s.io"

// The API an apiVersion names into *api; false for neither.
bool PodGroupApiOf(std::string_view api_version, PodGroupObject::Api* api);

// The group a pod is a member of (see above); `annotations` are the pod's.
std::string GroupNameOf(const WorkloadGroupRef& ref, const std::map<std::string, std::string>& annotations);

}  // namespace topofit::k8s
