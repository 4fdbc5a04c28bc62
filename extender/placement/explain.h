#pragma once
// Explain: why a pod would (not) go where - for POST /api/v1/explain and `topofit explain`.
//
// For every node (or the given ones): pass/fail with the reason, the best candidate set with its
// predicted ring bandwidth and the link classes of its pairs, the score with its parts and both sides
// of the bandwidth / fragmentation trade (in GPUs); plus the node the pipeline would choose. Read-only: it never reserves or changes the model.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/placement/pipeline.h"

namespace topofit::placement {

struct NodeExplanation {
  std::string node;
  FilterCode code = FilterCode::kPass;
  std::string reason;               // "" when passing.
  GpuSet free;
  std::optional<GpuSet> set;        // Best candidate set; nullopt when none.
  // Who picks the set: "topofit", or "dra-first-fit" on a DRA node (docs/dra.md), where `set` is
  // the GPUs kube-scheduler's allocator is predicted to give (topofit only chooses the node).
  std::string set_by = "topofit";
  double bandwidth_gbps = 0;        // Predicted ring all-reduce bandwidth of `set`.
  std::string worst_link;           // Slowest pair of `set`, e.g. "NV1", "SYS"; "" for < 2 GPUs.
  std::vector<std::string> links;   // Distinct link kinds among the pairs of `set`, best first.
  int score = 0;                    // 0..10; 0 when failing.
  std::vector<ScorePart> parts;
  // On a node that shares its GPUs (otherwise mode kNone and empty): what the devices are, the
  // physical GPUs of `set`, and the node's free devices and whole free GPUs.
  cluster::SharedDevices shared;
  GpuSet set_gpus;
  GpuSet whole_free_gpus;
  // FragmentationGradient's trade on this node, in GPUs: what the placement costs in fragmentation and
  // the price of its ring against the best any node offers (+inf under the lexicographic rule on a
  // slower set); nullopt when failing or FragmentationGradient is off.
  std::optional<NodeEvaluation::Trade> trade;
  // The band loss that ordered the best band before the tie-break rule (NodeEvaluation::band_loss),
  // in GPUs of the groups expected, and who gave it ("DomainFragmentation"); nullopt when none was asked.
  std::optional<double> band_loss;
  std::string band_loss_by;
};

struct Explanation {
  std::string pod;                  // "namespace/name"
  int gpus = 0;
  std::string policy;               // "best-effort", "required", "none"
  std::string min_link;             // Effective min-link, "" when none.
  std::string error;                // Invalid annotations; every node then fails with it.
  std::vector<NodeExplanation> nodes;  // Sorted: passing first by score descending, then by name.
  std::optional<std::string> chosen;   // Highest score (ties: first by name); nullopt if none pass.
  std::string workload;                // DescribeWorkload of the estimate FragmentationGradient used.
  double interconnect_rate = 0;        // scoring.interconnectRate (+inf: best ring first).
  std::string gpu_models;              // DescribeShortfall of it and the free GPUs; "" when no pod
                                       // seen is bound to a GPU model.
};

// nodes empty: every node of the model.
Explanation Explain(const Pipeline& pipeline, const cluster::PodRequest& pod, std::span<const std::string> nodes = {});

// One sentence on a placement, for the pod's event at bind:
//   "GPUs 0,1,2,3 on dgx-v100-1 over NV2 and NV1 links, 150.0 GB/s predicted ring all-reduce; node
//    scores: FragmentationGradient 0.53"
// `gpus` is the set given (the explanation's own set may differ if the node changed in between). The
// node scores are the parts other than SetQuality (relative to the other candidates, which a bind does
// not see; the bandwidth says it), by weighted contribution, highest first.
std::string PlacementSummary(const NodeExplanation& node, GpuSet gpus);

}  // namespace topofit::placement
