#pragma once
// Built-in topology profiles: machines people run, selectable by name.
//
// Each profile is the `nvidia-smi topo -m` text such a machine prints (checked against the real
// fixture where one exists), so a profile and a matrix `topofit node` published go through the same parser
// and model. Names are lower-case, e.g. "dgx1-v100", "hgx-a100-8", "hgx-h100-8", "pcie-8-dual-socket",
// "pcie-4-single-socket", "phb-2-workstation", and "generic-pcie-N" for any N >= 1.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "topology/topo_matrix.h"

namespace topofit {

struct ProfileInfo {
  std::string name;
  std::string description;  // One line: machine, GPU count, interconnect.
  int gpu_count = 0;        // 0 for the parametric generic-pcie-N.
};

std::vector<ProfileInfo> ListProfiles();

// The profile's matrix; an Error naming the known profiles when `name` is unknown.
Result<TopoMatrix> ProfileMatrix(std::string_view name);

// Maps GPU Feature Discovery labels (nvidia.com/gpu.product, nvidia.com/gpu.count) to a profile name,
// e.g. ("NVIDIA-A100-SXM4-80GB", 8) -> "hgx-a100-8"; unknown products give "generic-pcie-<count>".
std::string ProfileForProduct(std::string_view product, int gpu_count);

}  // namespace topofit
