#pragma once
// Parser for the text that `nvidia-smi topo -m` prints.
//
// Accepts what real machines print: space-aligned or tab-separated columns, padded " X ", NV# with
// any count, SOC (what older drivers print, and their legends define, for SYS) read as SYS, NIC
// rows/columns (NIC#, mlx5_#), trailing "CPU Affinity" / "NUMA Affinity" / "GPU NUMA ID" columns
// whose values may be empty or N/A, and the legend (including the NIC legend) after the matrix.
// CPU Affinity is a CPU list ("0-23,48-71", "0,2,4"); NUMA Affinity a node list ("0", "0-1", "0,2",
// "0-1,3"), kept as printed in numa_affinity_list; a GPU whose NUMA Affinity names one node is on
// that node (numa_affinity), one whose affinity spans several nodes is on no known node (nullopt: the
// driver could not tie it to one, and the model does not guess). A matrix that ends (end of input,
// a blank line or the legend) after every GPU row but before the last NIC row is accepted: the GPU rows
// hold every GPU-GPU and GPU-NIC link; links between two NICs without rows are filled as nic_links.h
// says, and TopoMatrix::warnings gets one "line L: no rows for ..." sentence saying which rows were
// missing. Anything else truncated (a GPU row missing, a row with fewer cells than the header has
// columns), asymmetric or otherwise malformed (a cell that is not a link class, a value that is not a
// list) is refused with an Error whose message starts "line L, column C: " and says what was
// expected. Terminal control sequences (the ESC[4m ... ESC[0m that nvidia-smi puts around the header
// row) are removed first; line and column numbers are those of the text without them. Never throws.

#include <string_view>

#include "base/status.h"
#include "topology/topo_matrix.h"

namespace topofit {

Result<TopoMatrix> ParseTopoMatrix(std::string_view text);

}  // namespace topofit
