#pragma once
// The filter plugins. Pipeline runs them in this order, stops at the first unresolvable status and
// joins the reasons of resolvable failures with "; ", e.g.
//   "4 GPUs requested, 2 free (GPUs 1,5); no NVLink-connected set of 4 free"
// Pods asking for no GPU never reach them; invalid pod annotations and unknown nodes are handled by
// the Pipeline itself (unresolvable, with the annotation error / "unknown node").

#include <string_view>

#include "extender/placement/plugin.h"

namespace topofit::placement {

// GpuCount: enough GPUs.
//   "4 GPUs requested, node has none"          unresolvable (no usable GPU)
//   "8 GPUs requested, node has 4"             unresolvable (more than the node's usable GPUs)
//   "4 GPUs requested, 2 free (GPUs 1,5)"      resolvable   (eviction could free enough)
class GpuCountFilter final : public FilterPlugin {
 public:
  std::string_view Name() const override { return "GpuCount"; }
  FilterStatus Filter(const CycleState& state, const NodeView& node) const override;
};

// TopologyRequirement: for policy required, a free set whose every pair reaches the effective
// min-link (NV when not given). 1-GPU pods always pass.
//   "required: no NVLink-connected set of 4 on this node"     unresolvable (not even when empty)
//   "no NVLink-connected set of 4 free"                       resolvable
// Other classes read "set of 4 linked at PIX or better".
class TopologyRequirementFilter final : public FilterPlugin {
 public:
  std::string_view Name() const override { return "TopologyRequirement"; }
  FilterStatus Filter(const CycleState& state, const NodeView& node) const override;
};

// "NVLink-connected set of 4" / "set of 4 linked at PIX or better".
std::string SetPhrase(int k, LinkClass min_link);

}  // namespace topofit::placement
