#pragma once
// TopoMatrix: what `nvidia-smi topo -m` says about one node, as parsed, before any modelling.
//
// Plain data. Invariants after a successful ParseTopoMatrix(): gpu_links is gpu_count x gpu_count,
// symmetric, Self exactly on the diagonal; gpu_nic is gpu_count x nic_count; nic_links is
// nic_count x nic_count, symmetric. Per-GPU vectors have gpu_count entries. `warnings` is empty
// unless the parser accepted input it could not read in full (see topo_parser.h).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/link_class.h"

namespace topofit {

struct TopoMatrix {
  std::vector<std::string> gpu_names;              // "GPU0", "GPU1", ...
  std::vector<std::string> nic_names;              // "NIC0", "mlx5_0", ...
  std::vector<std::vector<Link>> gpu_links;        // [gpu][gpu]
  std::vector<std::vector<Link>> gpu_nic;          // [gpu][nic]
  std::vector<std::vector<Link>> nic_links;        // [nic][nic]
  std::vector<std::string> cpu_affinity;           // per GPU; "" when empty or N/A
  std::vector<std::optional<int>> numa_affinity;   // per GPU; nullopt when empty, N/A, absent or several nodes
  std::vector<std::string> numa_affinity_list;     // per GPU; NUMA Affinity as printed ("0", "0-1"), "" when none
  std::vector<std::optional<int>> gpu_numa_id;     // per GPU; nullopt when empty, N/A or absent
  std::map<std::string, std::string> nic_legend;   // "NIC0" -> "mlx5_0" when the legend lists it
  std::vector<std::string> warnings;               // "line L: ..." for each part of the input taken on trust

  int gpu_count() const { return static_cast<int>(gpu_names.size()); }
  int nic_count() const { return static_cast<int>(nic_names.size()); }
};

}  // namespace topofit
