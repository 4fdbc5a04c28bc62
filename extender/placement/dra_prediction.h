#pragma once
// DraBindView: at bind on a DRA node (docs/dra.md), the GPUs kube-scheduler's allocator was predicted
// to give the pod and the GPUs its claim really got, side by side - for the GPUsAssigned event, the
// bind log line and explain.
//
// Predicted: Placer::FirstFit over the node's free GPUs plus those the pod itself already holds there
// (its claim may have reached the model before the bind: the allocator chose from the GPUs free
// before it). Allocated: the claim's GPUs (cluster::DraAllocation) by index, when the claim is known
// and names GPUs of this node. On a node whose GPUs the device plugin serves, dra is false and the
// rest empty. Reads the model under its shared lock; thread-safe.

#include <optional>
#include <string>
#include <string_view>

#include "extender/cluster/dra_gpus.h"
#include "extender/cluster/pod_intent.h"
#include "extender/placement/pipeline.h"
#include "topology/gpu_set.h"

namespace topofit::placement {

struct DraBindView {
  bool dra = false;
  GpuSet predicted;
  std::optional<GpuSet> allocated;
  // "" off DRA nodes; else e.g. "DRA claim allocated GPUs 0,1 as predicted" or "DRA claim allocated
  // GPUs 2,3, not the predicted 0,1" or "DRA claim not seen yet; predicted GPUs 0,1".
  std::string Note() const;
};

DraBindView ViewDraBind(const Pipeline& pipeline, const cluster::PodRequest& pod, std::string_view node,
                        const std::optional<cluster::DraAllocation>& allocation);

}  // namespace topofit::placement
