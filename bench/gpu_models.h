#pragma once
// GpuModelMap: which topology a node of a given GPU model and count has, read from a small CSV file
// that users edit (bench/gpu-models.csv documents each mapping).
//
// Format: one rule per line, `model,gpus,topology,why`; '#' starts a comment line. `model` and `gpus`
// may be `*` (any). `topology` is a built-in profile name (`topofit topo --list-profiles`), in which
// `{n}` becomes the node's GPU count (generic-pcie-{n}), or a path to an `nvidia-smi topo -m` text
// file, relative to the map file. The first matching rule wins, so put specific rules first.
//
// Node traces such as openb name GPU models but not interconnects, so this mapping is an assumption
// the bench makes explicit rather than hides.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "topology/topology.h"

namespace topofit::bench {

struct GpuModelRule {
  std::string model;     // "*" matches any.
  int gpus = 0;          // 0 matches any.
  std::string topology;  // Profile name (may hold "{n}") or a topo -m file path.
  std::string why;
  int line = 0;
};

class GpuModelMap {
 public:
  // `base_dir` resolves relative topology file paths.
  static Result<GpuModelMap> Parse(std::string_view text, std::string base_dir);
  static Result<GpuModelMap> Load(const std::string& path);
  // The map shipped with topofit: next to the executable, else in the source tree.
  static std::string DefaultPath();

  const std::vector<GpuModelRule>& rules() const { return rules_; }

  // The topology spec (profile name with {n} expanded, or an absolute-ish file path) for a node.
  Result<std::string> TopologyFor(std::string_view model, int gpus) const;

 private:
  std::vector<GpuModelRule> rules_;
  std::string base_dir_;
};

// Builds (interned) the topology a spec names: a file path when it contains '/' or ends in ".txt",
// else a built-in profile. Fails when the result does not have `gpus` GPUs.
Result<std::shared_ptr<const Topology>> ResolveTopology(const std::string& spec, int gpus,
                                                        TopologyRegistry& registry);

}  // namespace topofit::bench
