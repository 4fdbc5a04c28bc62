#pragma once
// The score plugins; the formula that combines them is in pipeline_config.h. Each returns a value in
// [0, 1], higher is better; a new scoring idea is a new class here plus a weight in the config.

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "extender/model/plugin.h"

namespace topofit::model {

// Every built-in score plugin, in scoring order: what a Pipeline chooses from unless it is given its
// own list. PipelineConfig::weights enables a plugin by its Name(); a plugin with no weight is not
// run. To add a built-in, list it in score_plugins.cc.
std::vector<std::unique_ptr<ScorePlugin>> AllScorePlugins();

// SetQuality: how good the set this node offers is, relative to the best the pod could get on any
// node of the request: ring(set) / max ring. 1 for 1-GPU pods (every single GPU is as good) and for
// policy none; halved when a best-effort pod's set misses its min-link.
class SetQualityScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "SetQuality"; }
  bool ReadsResources() const override { return false; }
  void PreScore(CycleState& state, std::span<const NodeView> nodes,
                std::span<const Candidate> candidates) const override;
  double Score(const CycleState& state, const NodeView& node, const Candidate& c) const override;
};

// Packing: prefer filling partly used nodes, so whole nodes stay free for big pods:
// (usable - free + k) / usable.
class PackingScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "Packing"; }
  bool ReadsResources() const override { return false; }
  double Score(const CycleState& state, const NodeView& node, const Candidate& c) const override;
};

// Fragmentation: prefer placements that keep the node useful for the expected request mix (whole
// NVLink islands free): 1 - (Future(free) - Future(free - set)) / Future(usable).
class FragmentationScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "Fragmentation"; }
  bool ReadsResources() const override { return false; }
  double Score(const CycleState& state, const NodeView& node, const Candidate& c) const override;
};

// Stranding: keep free GPUs usable. A GPU is only worth something while its node still has CPU and
// memory for a pod to run beside it; with kube-scheduler spreading CPU and memory (LeastAllocated)
// and CPU-only pods landing on GPU nodes, GPUs end up free on nodes whose CPU or memory is used up.
//   d_cpu = allocatable CPU / usable GPUs, d_mem likewise  (what one GPU of this node comes with)
//   backed(g, cpu, mem) = min(g, cpu / d_cpu, mem / d_mem)   (free GPUs still backed; a dimension
//                                                              with no allocatable figure is ignored)
//   waste = backed(before) - backed(after placing the pod) - k     (k = GPUs the pod takes)
//   s = clamp(0.5 - waste / (2k), 0, 1)
// A pod that uses its GPUs' share of CPU and memory wastes nothing (0.5, on every node alike). A pod
// hungrier than its share destroys more backed GPUs than it takes (s < 0.5), least so on a node whose
// CPU and memory are plentiful; a frugal pod on a node short of CPU or memory takes GPUs that no
// average pod could use (waste < 0, s > 0.5), which is where such a pod should go.
class StrandingScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "Stranding"; }
  bool ReadsResources() const override { return true; }
  double Score(const CycleState& state, const NodeView& node, const Candidate& c) const override;
};

}  // namespace topofit::model
