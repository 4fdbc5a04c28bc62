#pragma once
// Preempt: which of kube-scheduler's candidate victims really make room for the pod.
//
// kube-scheduler proposes victims per node by GPU count alone. For each node we keep the smallest
// subset of the GPU-holding victims after whose eviction the pod passes our filter (a free set of the
// right size, meeting a required min-link); among subsets of that size, the one with the lowest
// priorities (smallest highest priority, then smallest sum). Victims holding no GPU on that node are
// kept as given: the scheduler chose them for other resources we cannot see. Nodes where even all
// victims would not help are dropped; so are unknown nodes. A node sent with an empty victim list
// (recent schedulers) is filled from the pods bound there. Victims come back by decreasing priority,
// as the protocol asks. Exact for up to 16 GPU victims per node, greedy beyond. Read-only.
// Pods already terminating (deletionTimestamp) still hold their GPUs in the model - kubelet frees
// them only when the pod is gone, so nothing is planned onto them before - but they are leaving:
// their GPUs count as freed without evicting anyone, and they are never returned as victims. The
// preemptor is nominated and binds once they are gone.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extender/placement/pipeline.h"

namespace topofit::placement {

struct VictimCandidate {
  std::string uid;
  std::optional<int32_t> priority;  // nullopt (meta victims): the model's record, else 0.
};

using NodeVictims = std::map<std::string, std::vector<VictimCandidate>, std::less<>>;

struct PreemptOutcome {
  std::map<std::string, std::vector<std::string>, std::less<>> victims;  // node -> uids, by decreasing priority
};

PreemptOutcome Preempt(const Pipeline& pipeline, const cluster::PodRequest& pod, const NodeVictims& candidates);

}  // namespace topofit::placement
