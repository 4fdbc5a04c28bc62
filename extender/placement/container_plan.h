#pragma once
// SplitAmongContainers: which of a pod's chosen GPUs each of its GPU containers is planned to get -
// the per-container part of topofit.io/gpu-plan.
//
// kubelet's device manager admits a pod's containers one at a time: init containers in order, then
// app containers. A regular init container's devices go to a per-pod "reuse" pool when it is
// done; every later container takes devices from that pool first (kubelet picks which, without
// asking the device plugin) and only asks for the rest. A restartable init container (sidecar) and
// an app container keep theirs for the pod's life.
//
// The rule, on `chosen` in index order:
//   - Long-lived containers (sidecars in init order, then app containers in order) get disjoint,
//     consecutive runs of `chosen`.
//   - A regular init container gets the first GPUs of `chosen` that no sidecar started before it
//     holds. Those are the runs of the containers that come next, so what it leaves in the reuse
//     pool is what they are planned to take.
// The pod's union is always `chosen`. Where the reuse pool holds more GPUs than the next container
// needs, kubelet picks among them itself: the split among that pod's containers may then differ
// from the plan, never the pod's set (the node side reports what each container got).
//
// Errors: a container without a name; `chosen` not of the pod's effective request (the long-lived
// containers' sum, at least every init container's peak); no GPU containers.

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/objects.h"
#include "topology/gpu_set.h"

namespace topofit::placement {

using ContainerSplit = std::vector<std::pair<std::string, GpuSet>>;  // In kubelet's admission order.

Result<ContainerSplit> SplitAmongContainers(const std::vector<k8s::ContainerGpus>& containers, GpuSet chosen);

// The plan bind writes: the split, by UUID (`uuids`: the node's index -> UUID map). Errors: the
// node publishes no UUID map (the pod then gets an index-only placement: topofit.io/gpu-ids and no
// plan), or the split's.
Result<k8s::GpuAssignment> MakeGpuPlan(const std::vector<k8s::ContainerGpus>& containers, GpuSet chosen,
                                       const std::string& node, const std::vector<std::string>& uuids,
                                       int64_t unix_seconds);

}  // namespace topofit::placement
