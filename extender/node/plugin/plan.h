#pragma once
// What the node side knows about one pod on its node: identity, its GPU containers in kubelet's
// admission order, and its plan (topofit.io/gpu-plan, written by the extender's bind) - decoded from
// the pod's API JSON (a watch event, a list item, or a --pods-file entry).
//
// Plan and actual are k8s::GpuAssignment (extender/k8s/gpu_plan.h: the annotation's one contract,
// parser and encoder, shared with the extender's bind that writes the plan).
//
// DecodeNodePod never fails on a bad plan: the pod is kept with `plan` empty and `plan_error` set
// (the service logs it once), so a pod that wrote itself a broken plan is matched like a foreign pod.
// It fails only when the object is not a pod (no metadata.uid).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "extender/k8s/gpu_plan.h"

namespace topofit::node {

using k8s::GpuAssignment;  // The plan's and the actual's type, parser and encoder: extender/k8s/gpu_plan.h.
using k8s::kGpuActualAnnotation;
using k8s::kGpuPlanAnnotation;

using DeviceList = std::vector<std::string>;
// "a,b,c": device IDs as the node side's log lines and Events write them.
std::string JoinDevices(const DeviceList& devices);

struct GpuContainer {
  std::string name;
  int64_t gpus = 0;          // limits[resource] (else requests): what kubelet allocates for it.
  bool init = false;         // An init container (kubelet admits those first).
  bool restartable = false;  // A sidecar: an init container with restartPolicy Always.
};

struct NodePod {
  std::string uid;
  std::string namespace_;
  std::string name;
  std::string node_name;           // spec.nodeName
  std::string phase;               // status.phase
  std::string creation_timestamp;  // RFC 3339 as the API server writes it (sorts as text).
  bool deleting = false;           // metadata.deletionTimestamp set.
  std::vector<GpuContainer> containers;  // Those asking for the resource; init containers first, spec order.
  std::optional<GpuAssignment> plan;
  std::string plan_error;  // Why `plan` is empty although the annotation is set (ParseGpuAssignment's error).
  std::optional<GpuAssignment> actual;  // topofit.io/gpu-actual as last published (unparsable: empty).

  bool terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  std::string key() const { return namespace_ + "/" + name; }
};

Result<NodePod> DecodeNodePod(const nlohmann::json& pod, std::string_view resource);

// Whether `held` is what kubelet gives `container` of `pod` when it follows `plan`: exactly the
// container's planned set - or, for a container kubelet fills wholly from the pod's reuse pool, as
// many GPUs as planned, all of that pool. Kubelet's device manager (v1.36.3, manager.go:366-396 and
// :640-660) puts every regular init container's devices in a per-pod pool; each later container
// takes from it first, choosing which itself with no GetPreferredAllocation call, and a long-lived
// one (app container, sidecar) takes its devices out of it. The pool replayed on the plan says which
// containers it fills wholly: those whose size it covers at their turn. Order is ignored; false when
// the plan has no set for the container.
bool HoldsAsPlanned(const NodePod& pod, const GpuAssignment& plan, std::string_view container, const DeviceList& held);

// The pods of a PodList, a JSON array of pods, or a single pod (the --pods-file formats).
Result<std::vector<NodePod>> DecodeNodePods(std::string_view text, std::string_view resource);

}  // namespace topofit::node
