#pragma once
// Parser for the text that `nvidia-smi topo -m` prints.
//
// Accepts what real machines print: space-aligned or tab-separated columns, padded " X ", NV# with
// any count, NIC rows/columns (NIC#, mlx5_#), trailing "CPU Affinity" / "NUMA Affinity" /
// "GPU NUMA ID" columns whose values may be empty or N/A, and the legend (including the NIC legend)
// after the matrix. Anything truncated, asymmetric or otherwise malformed is refused with an Error
// whose message starts "line L, column C: " and says what was expected. Never throws.

#include <string_view>

#include "base/status.h"
#include "topology/topo_matrix.h"

namespace topofit {

Result<TopoMatrix> ParseTopoMatrix(std::string_view text);

}  // namespace topofit
