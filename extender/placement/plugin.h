#pragma once
// The plugin interfaces of the placement pipeline, shaped like kube-scheduler's framework: a filter
// plugin says whether a node can take the pod and why not; a score plugin rates a node that passed.
// Each idea is one small class (filter_plugins.h, score_plugins.h); Pipeline runs them in order.
//
// Plugins are stateless and const: everything about one pod's cycle is in CycleState, and every
// plugin sees a node through one NodeView taken once per cycle (the same free mask for all of them;
// both in cycle_state.h).
//
// What a plugin may read of a node (node_classes.h): filter plugins its GPU state (NodeKey: topology,
// usable, free, GPU model); score plugins that plus allocatable and used CPU and memory (ResourceKey), unless
// they say ReadsResources() == false. Never its name or anything else: the pipeline evaluates each
// distinct state once per cycle and gives every node of that state the same verdict and score. A
// plugin needing more extends those keys.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "extender/placement/cycle_state.h"
#include "extender/placement/placer.h"

namespace topofit::placement {

enum class FilterCode : uint8_t {
  kPass,
  kFail,          // Resolvable: could fit if pods were evicted (kube-scheduler's FailedNodes).
  kUnresolvable,  // Can never fit (FailedAndUnresolvableNodes).
};

std::string_view ToString(FilterCode code);  // "pass", "fail", "unresolvable"

struct FilterStatus {
  FilterCode code = FilterCode::kPass;
  std::string reason;  // One short line for the pod's FailedScheduling event; "" when passing.

  static FilterStatus Pass() { return {}; }
  static FilterStatus Fail(std::string r) { return {FilterCode::kFail, std::move(r)}; }
  static FilterStatus Unresolvable(std::string r) { return {FilterCode::kUnresolvable, std::move(r)}; }
  bool passed() const { return code == FilterCode::kPass; }
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view Name() const = 0;
  virtual FilterStatus Filter(const CycleState& state, const NodeView& node) const = 0;
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string_view Name() const = 0;
  // Called once per cycle before Score, with the nodes about to be scored and their candidates -
  // one node per distinct GPU state: it must not read CPU or memory, nor depend on how many nodes
  // share a state.
  virtual void PreScore(CycleState& state, std::span<const NodeView> nodes,
                        std::span<const PlacerChoice> candidates) const {}
  // In [0, 1]; higher is better. Called only for nodes that pass the filters.
  virtual double Score(const CycleState& state, const NodeView& node, const PlacerChoice& candidate) const = 0;
  // Whether Score reads the node's CPU and memory. false: it reads only the GPU state, and is run
  // once per distinct GPU state (a busy cluster has a few hundred, against one per node for CPU).
  virtual bool ReadsResources() const { return true; }
};

}  // namespace topofit::placement
