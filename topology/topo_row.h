#pragma once
// TopoRow: one device row of `nvidia-smi topo -m` text - its name, one link cell per header column and,
// on GPU rows, the values under the header's titles.
//
// Contract of ParseTopoRow: the row starts with the name of device `r` of the header; then one link class
// per device column (X exactly on the diagonal, NV# only between two GPUs); then, on a GPU row, at most
// one value per title - CPU Affinity a CPU list ("0-23,48-71"), NUMA Affinity a node list ("0", "0-1"),
// GPU NUMA ID a node number. Not an error: empty or N/A values (no value), fewer values than titles
// (space-aligned rows place each under the title it lines up with), the extra tab nvidia-smi pads a
// value with, NIC rows ending in empty tab fields. Anything else is refused with a TopoParseError
// (topo_parse_error.h) naming the field and what was expected. Never throws.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "topology/link_class.h"
#include "topology/topo_header.h"

namespace topofit {

// One link cell and where it was read (for the symmetry check's messages).
struct TopoCell {
  Link link;
  int line = 0;
  int column = 0;
};

struct TopoRowValues {
  std::string cpu;             // CPU Affinity as printed; "" for none.
  std::optional<int> numa;     // The node when NUMA Affinity names exactly one.
  std::string numa_list;       // NUMA Affinity as printed; "" for none.
  std::optional<int> gpu_numa; // GPU NUMA ID.
};

// Reads row `r` (device h.devices[r]) from `line`, number `lineno`, into (*cells)[r] and, for a GPU row,
// into *values (which may be null for NIC rows).
Status ParseTopoRow(std::string_view line, int lineno, const TopoHeader& h, int r,
                    std::vector<std::vector<TopoCell>>* cells, TopoRowValues* values);

}  // namespace topofit
