#pragma once
// Plain decoded views of the Kubernetes objects topofit cares about: only the fields it reads.
//
// Produced by the decoders in extender/k8s/ (from API JSON, `kubectl get -o json|yaml` snapshots, or
// extender request bodies) and consumed by the cluster model. No JSON types leak past this header.
// Quantities are already validated: `gpus` is a whole, non-negative count.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extender/k8s/pod_group.h"

namespace topofit::k8s {

inline constexpr const char* kGpuResource = "nvidia.com/gpu";
// Annotations and labels topofit reads or writes.
inline constexpr const char* kGpuIdsAnnotation = "topofit.io/gpu-ids";              // pod: "0,1,2,3"
// pod, by topofit's bind: where the pod went and why, in words ("GPUs 0,1 on n1 over NV2 ...").
inline constexpr const char* kPlacementAnnotation = "topofit.io/placement";
inline constexpr const char* kTopologyAnnotation = "topofit.io/gpu-topology";       // node: profile or topo -m text
inline constexpr const char* kTopologyPolicyAnnotation = "topofit.io/topology-policy";  // pod
inline constexpr const char* kMinLinkAnnotation = "topofit.io/min-link";            // pod
inline constexpr const char* kReplicaPlacementAnnotation = "topofit.io/replica-placement";  // pod: distinct | packed
// pod, by topofit: when it last asked kube-scheduler to try the pod again (KubeWriter::RequeuePod).
inline constexpr const char* kRequeuedAtAnnotation = "topofit.io/requeued-at";      // RFC 3339 UTC
// pod: the group (job of many pods) it is a member of; topofit.io/group-* say what the group asks
// (extender/groups/group_spec.h).
inline constexpr const char* kGroupAnnotation = "topofit.io/group";
inline constexpr const char* kGfdProductLabel = "nvidia.com/gpu.product";
inline constexpr const char* kGfdCountLabel = "nvidia.com/gpu.count";
// GFD labels of shared GPUs (extender/cluster/shared_devices.h).
inline constexpr const char* kGfdReplicasLabel = "nvidia.com/gpu.replicas";
inline constexpr const char* kGfdSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";
inline constexpr const char* kGfdMigStrategyLabel = "nvidia.com/mig.strategy";
// Set by the cloud on managed clusters (EKS, GKE, AKS): the machine type, and GKE's GPU type.
inline constexpr const char* kInstanceTypeLabel = "node.kubernetes.io/instance-type";
inline constexpr const char* kGkeAcceleratorLabel = "cloud.google.com/gke-accelerator";

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  bool deleting = false;  // metadata.deletionTimestamp is set.
};

struct NodeObject {
  ObjectMeta meta;
  int64_t allocatable_gpus = 0;  // status.allocatable[nvidia.com/gpu], else capacity, else 0.
  int64_t capacity_gpus = 0;
  bool unschedulable = false;    // spec.unschedulable
  // Non-GPU allocatable resources, for the bench's own fit check: "cpu" in millicores, "memory" in bytes.
  int64_t allocatable_cpu_milli = 0;
  int64_t allocatable_memory_bytes = 0;
};

// One container's nvidia.com/gpu request, for splitting the pod's GPUs among its containers.
struct ContainerGpus {
  std::string name;
  int64_t gpus = 0;
  bool init = false;         // An init container (kubelet admits these first, in order).
  bool restartable = false;  // An init container with restartPolicy Always (a sidecar: keeps its GPUs).
  friend bool operator==(const ContainerGpus&, const ContainerGpus&) = default;
};

// One entry of a pod's spec.resourceClaims: its name in the pod, and the ResourceClaim it names -
// resourceClaimName, or for a resourceClaimTemplateName the claim made from the template, as
// status.resourceClaimStatuses names it ("" until the claim exists).
struct PodClaimRef {
  std::string name;
  std::string claim;
  bool from_template = false;
  friend bool operator==(const PodClaimRef&, const PodClaimRef&) = default;
};

struct PodObject {
  ObjectMeta meta;
  // Effective nvidia.com/gpu request, computed as upstream does for extended resources:
  // max(sum over containers (+ restartable init containers), largest regular init container).
  int64_t gpus = 0;
  int64_t cpu_milli = 0;          // Effective cpu request, same rule.
  int64_t memory_bytes = 0;       // Effective memory request, same rule.
  std::string node_name;          // spec.nodeName; empty when not bound.
  std::string scheduler_name;     // spec.schedulerName
  std::string phase;              // status.phase: Pending, Running, Succeeded, Failed, Unknown
  std::string nominated_node;     // status.nominatedNodeName: the node kube-scheduler tries first
  int32_t priority = 0;           // spec.priority (0 when absent)
  bool preempt_never = false;     // spec.preemptionPolicy is Never: it preempts no pod
  // GPU models the pod may run on, sorted and unique; empty = any: spec.nodeSelector
  // nvidia.com/gpu.product, or the values of `In` expressions on that key in required node affinity
  // (the union over nodeSelectorTerms, which are ORed; any term without such an expression = any).
  std::vector<std::string> gpu_products;
  // The containers that request GPUs: init containers in order, then app containers in order.
  std::vector<ContainerGpus> gpu_containers;
  // The PodGroup it names (spec.schedulingGroup.podGroupName, label scheduling.x-k8s.io/pod-group).
  WorkloadGroupRef group_ref;
  // DRA: spec.resourceClaims in order (at most 32 read; claims_unread when it has more), and the
  // devices asked through an implicit extended resource name (deviceclass.resource.kubernetes.io/
  // <class>: effective request as for gpus; the first such class of the pod; "" and 0 when none).
  std::vector<PodClaimRef> resource_claims;
  bool claims_unread = false;
  std::string class_resource;
  int64_t class_resource_count = 0;
  bool terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

}  // namespace topofit::k8s
