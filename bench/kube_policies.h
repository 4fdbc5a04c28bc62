#pragma once
// kube-scheduler's own node scoring, as a cluster without topofit runs it, with the stock NVIDIA device
// plugin choosing the GPUs (ScoredPolicy).
//
//   kube-default        NodeResourcesFit LeastAllocated over cpu and memory (weights 1, the default
//                       scoringStrategy) + NodeResourcesBalancedAllocation over cpu and memory, each
//                       0-100 with weight 1, as pkg/scheduler/framework/plugins/noderesources computes
//                       them (integer arithmetic).
//   kube-mostallocated  NodeResourcesFit MostAllocated over cpu, memory and nvidia.com/gpu (weights 1;
//                       operators who bin-pack GPUs list the GPU resource) + BalancedAllocation.
// The other default score plugins (taints, affinity, spreading, image locality) score every node of
// the openb cluster alike, so they are left out.

#include <memory>

#include "bench/policy.h"

namespace topofit::bench {

std::unique_ptr<Policy> MakeKubeDefaultPolicy();
std::unique_ptr<Policy> MakeKubeMostAllocatedPolicy();

// Exposed for tests: the plugin scores of `pod` on `node`.
int64_t LeastAllocatedScore(const SimNode& node, const PodSpec& pod);
int64_t MostAllocatedScore(const SimNode& node, const PodSpec& pod);
int64_t BalancedAllocationScore(const SimNode& node, const PodSpec& pod);

}  // namespace topofit::bench
