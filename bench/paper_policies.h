#pragma once
// The baseline policies of the openb paper (Weng et al., "Beware of Fragmentation", USENIX ATC'23), as
// its simulator (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin/) scores nodes, with
// whole GPUs (a GPU-sharing pod asks for one whole GPU here) and the stock device plugin's set choice:
//
//   random       random_score.go: a random feasible node.
//   bestfit      best_fit_score.go: 100 * (1 - sum_i w_i (free_i - req_i) / maxSpec_i) over cpu and
//                GPU (milli-GPU), w = 0.5 each, maxSpec = 128 cores and 8 GPUs: the tightest fit wins.
//   dotprod      dot_product_score.go (Tetris): 100 * (1 - (free . req) / 2) over the same two
//                normalised dimensions: the node whose free resources align least with the request.
//   gpu-packing  gpu_packing_score.go: a node already in use scores max(50 - GPUs it must open, 33);
//                an untouched node scores max(33 - its free GPUs, its free GPUs); CPU-only pods score 0
//                everywhere. Its shared-GPU case (fractional GPUs) never arises with whole GPUs.

#include <memory>

#include "bench/policy.h"

namespace topofit::bench {

std::unique_ptr<Policy> MakeRandomPolicy();
std::unique_ptr<Policy> MakeBestFitPolicy();
std::unique_ptr<Policy> MakeDotProdPolicy();
std::unique_ptr<Policy> MakeGpuPackingPolicy();

// Exposed for tests.
int64_t BestFitScore(const SimNode& node, const PodSpec& pod);
int64_t DotProdScore(const SimNode& node, const PodSpec& pod);
int64_t GpuPackingScore(const SimNode& node, const PodSpec& pod);

}  // namespace topofit::bench
