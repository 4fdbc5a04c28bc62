#pragma once
// Links between NICs that `nvidia-smi topo -m` text did not give: a paste that stops after the GPU
// rows (or part way through the NIC rows) still tells every GPU-GPU and GPU-NIC link, but not how two
// NICs without rows are connected.

#include <vector>

#include "topology/topo_matrix.h"

namespace topofit {

// Fills m->nic_links[a][b] for every pair of distinct NICs a and b with row_known[a] and row_known[b]
// both false, from the rows the input did give (every GPU row and the NIC rows marked known): the link
// is the best, over every third device k with a known row, of the weaker of a-k and k-b; SYS when no
// such k relates them better. That is the class the PCIe tree forces (two devices under one switch
// with k are under that switch together), so the filled matrix stays one tree; the NICs may in truth
// be closer. Pairs with at least one known row, and the diagonal, are left as they are. Expects the
// invariants of topo_matrix.h and row_known.size() == nic_count(); never fails.
void FillUnknownNicLinks(const std::vector<bool>& row_known, TopoMatrix* m);

}  // namespace topofit
