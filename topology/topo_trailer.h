#pragma once
// TopoTrailer: what follows the rows of an `nvidia-smi topo -m` matrix - blank lines, the "Legend:"
// block, and the "NIC Legend:" block whose entries ("NIC0: mlx5_0") name the NIC columns.
//
// Contract of ParseTopoTrailer: lines before any legend must be blank; lines of the "Legend:" block are
// skipped whatever they hold (copies wrap and indent them); each non-blank line of the "NIC Legend:"
// block is "<NIC column>: <name>" and fills TopoMatrix::nic_legend. Anything else is refused with a
// TopoParseError (topo_parse_error.h). Never throws.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "topology/topo_header.h"
#include "topology/topo_matrix.h"

namespace topofit {

// True for a line that opens a legend block ("Legend:" or "NIC Legend:", surrounding blanks allowed).
bool StartsTopoLegend(std::string_view line);

// Reads lines[from..] (the matrix having had `rows` rows) and fills m->nic_legend.
Status ParseTopoTrailer(const std::vector<std::string_view>& lines, size_t from, int rows, const TopoHeader& h,
                        TopoMatrix* m);

}  // namespace topofit
