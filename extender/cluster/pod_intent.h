#pragma once
// PodRequest: what one pod asks of the placement pipeline - how many GPUs and how much it cares about
// their interconnect - decoded from the k8s::PodObject and its annotations.
//
// Annotations (see extender/k8s/objects.h for the keys):
//   topofit.io/topology-policy: best-effort (default) | required | none      (case-insensitive)
//   topofit.io/min-link:        NV | PIX | PXB | PHB | NODE | SYS             (case-insensitive)
//   topofit.io/replica-placement: distinct (default) | packed                 (case-insensitive)
//
// Semantics (this is the documented contract; README text is written from it):
//   best-effort  Any node with enough free GPUs passes. The pipeline prefers nodes offering a better
//                set. With min-link, the chosen set is the best set whose every pair is at least that
//                class when one is free, otherwise the best set without that constraint.
//   required     A node passes only if a free set exists whose every pair is at least min-link.
//                required without min-link means min-link NV: "required" is about NVLink, and a
//                rule that depended on what each node type could offer would make the same pod
//                demand different things on different nodes. Pods of one GPU have no pairs and
//                therefore always satisfy it.
//   none         Topology is ignored for node choice (the set-quality score is neutral); GPUs are
//                still chosen by SetSelector, whose tie-breaks keep the rest of the node useful.
//   replica-placement, on nodes whose GPUs are time-sliced or shared by MPS (shared_devices.h):
//     distinct   the pod's replicas are on as many distinct physical GPUs (the best such set);
//     packed     several of them may be replicas of one GPU (the pod says it runs there).
//     MIG devices are always chosen best fit; on other nodes it changes nothing.
//
// Invalid annotation values are never ignored: MakePodRequest records them in `error`, and the
// pipeline then fails every node as unresolvable with that message, which kube-scheduler shows in
// the pod's FailedScheduling event.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/cluster/dra_pod_ask.h"
#include "extender/k8s/objects.h"
#include "topology/link_class.h"

namespace topofit::cluster {

enum class TopologyPolicy : uint8_t { kBestEffort, kRequired, kNone };

std::string_view ToString(TopologyPolicy policy);  // "best-effort", "required", "none"

struct PodIntent {
  TopologyPolicy policy = TopologyPolicy::kBestEffort;
  // As written by the user; for kRequired without the annotation this stays nullopt and
  // EffectiveMinLink() gives Nv.
  std::optional<LinkClass> min_link;
  bool packed_replicas = false;  // topofit.io/replica-placement: packed.

  // The link class every pair of the chosen set must (required) or should (best-effort) reach;
  // nullopt when there is no such constraint or preference.
  std::optional<LinkClass> EffectiveMinLink() const {
    if (policy == TopologyPolicy::kNone) return std::nullopt;
    if (policy == TopologyPolicy::kRequired && !min_link) return LinkClass::Nv;
    return min_link;
  }
  friend bool operator==(const PodIntent&, const PodIntent&) = default;
};

// Parses the two annotations. The error names the annotation, the bad value and what is accepted, e.g.
// "invalid topofit.io/min-link 'NVX': expected NV, PIX, PXB, PHB, NODE or SYS".
Result<PodIntent> ParsePodIntent(const std::map<std::string, std::string>& annotations);

struct PodRequest {
  std::string uid;
  std::string namespace_;
  std::string name;
  int gpus = 0;            // Effective nvidia.com/gpu request (k8s decoding already did the max/sum).
  int32_t priority = 0;
  bool preempt_never = false;  // spec.preemptionPolicy: Never (kube-scheduler preempts nothing for it).
  int64_t cpu_milli = 0;       // Effective requests, for resource-aware score plugins.
  int64_t memory_bytes = 0;
  PodIntent intent;
  // GPU models (nvidia.com/gpu.product values) the pod may run on, sorted; empty = any. From its
  // nodeSelector / required node affinity (k8s::PodObject::gpu_products); kube-scheduler enforces it,
  // the pipeline only learns the workload from it (workload_estimate.h).
  std::vector<std::string> gpu_products;
  std::string error;       // Non-empty when the pod's annotations are invalid (see above).
  std::vector<k8s::ContainerGpus> containers;  // Its GPU containers, for the per-container plan.
  // Group membership, read by extender/groups/ (group_lookup.h): the group's name by k8s::GroupNameOf
  // (the PodGroup of spec.schedulingGroup.podGroupName, else of the label scheduling.x-k8s.io/pod-group,
  // else topofit.io/group; "" for a pod of no group), the PodGroup references as decoded, and the pod's
  // topofit.io/group and topofit.io/group-* annotations as written.
  std::string group;
  k8s::WorkloadGroupRef group_ref;
  std::map<std::string, std::string> group_annotations;

  std::string group_key() const { return group.empty() ? std::string() : namespace_ + "/" + group; }
  // status.nominatedNodeName: the node kube-scheduler evaluates alone first (its evaluateNominatedNode);
  // topofit sets it to a group member's slot node (group_coordinator.h).
  std::string nominated_node;

  // DRA GPUs asked through the pod's own claims or an implicit extended resource name (set by the
  // prioritize of pods without nvidia.com/gpu, from DraCluster::AskOf); null otherwise. Where set,
  // gpus is DraPodAsk::gpus and a node's set is the allocator's prediction (PredictDraAsk).
  std::shared_ptr<const DraPodAsk> dra_ask;

  bool wants_gpus() const { return gpus > 0; }
  std::string key() const { return namespace_ + "/" + name; }
};

PodRequest MakePodRequest(const k8s::PodObject& pod);

}  // namespace topofit::cluster
