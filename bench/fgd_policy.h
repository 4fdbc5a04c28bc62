#pragma once
// FGD: Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation", USENIX ATC'23, the
// openb trace's paper), on whole GPUs, with the stock device plugin's set choice (ScoredPolicy).
//
// The workload is the same running estimate topofit's extender keeps (placement::WorkloadEstimate), fed
// with each pod as it arrives, before it is placed - never with pods still to come. For a pod shape
// m (GPU count k, CPU, memory, allowed GPU models) on a node with F free GPUs, free CPU C and memory M:
//   frag_m(node) = F   when m cannot run there (k > F, CPU > C, memory > M, or the wrong GPU model)
//                = 0   otherwise (whole GPUs: every free GPU can serve m)
//   frag(node)   = sum_m p_m frag_m(node)
// The pod goes to the feasible node where frag(after) - frag(before) is smallest (score = -delta in
// millionths of a GPU; ties at random as kube-scheduler's selectHost). CPU-only pods are placed by
// the same rule; the estimate holds GPU pods only, as topofit's does.
//
// fgd-gpu-pods and fgd-gpu-pods-mostallocated place GPU pods by FGD and pods without GPUs by
// kube-scheduler's in-tree scores alone (default profile: LeastAllocated + BalancedAllocation; or
// MostAllocated + BalancedAllocation), as a scheduler whose CPU-only pods never reach a GPU-aware
// plugin would: the like-for-like comparison for topofit's rows when its extender sees GPU pods only.

#include <memory>

#include "bench/policy.h"

namespace topofit::bench {

enum class FgdScope { kAllPods, kGpuPodsLeastAllocated, kGpuPodsMostAllocated };

std::unique_ptr<Policy> MakeFgdPolicy(FgdScope scope = FgdScope::kAllPods);

}  // namespace topofit::bench
