#pragma once
// TopoHeader: the header row of `nvidia-smi topo -m` text - the device columns and the titles of the
// value columns that follow them.
//
// Contract of ParseTopoHeader: the row is GPU0, GPU1, ... in order (at most GpuSet::kMaxGpus), then
// NIC columns named by any identifier that is not a link class (NIC0, mlx5_0, mlx5_bond_0), at most
// kMaxTopoDevices devices in all, every name once; then the titles "CPU Affinity", "NUMA Affinity",
// "GPU NUMA ID", each at most once, in any order. Not an error: a header with no titles, or with no NIC
// columns. Anything else is refused with a TopoParseError (topo_parse_error.h) naming the column; a
// first name that runs several names together ("GPU0GPU1GPU2...") is refused with a note saying the
// separators are missing. Never throws.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace topofit {

// Far above any real node (GPUs + NICs); bounds the work done on garbage input.
constexpr int kMaxTopoDevices = 512;

enum class TopoTitle { kCpu, kNuma, kGpuNuma };

struct TopoTitleSpec {
  TopoTitle title;
  std::vector<std::string_view> words;  // {"CPU", "Affinity"}
  std::string_view name;                // "CPU Affinity"
};

struct TopoTitleColumn {
  const TopoTitleSpec* spec;
  int visual;  // Display column of the title, to place values in space-aligned rows.
};

struct TopoHeader {
  std::vector<std::string> devices;  // GPUs first, then NICs, in column order.
  int gpus = 0;
  std::vector<TopoTitleColumn> titles;
};

// `line` is the header row, `lineno` its 1-based line number (for errors).
Result<TopoHeader> ParseTopoHeader(std::string_view line, int lineno);

// The header's titles as printed, joined by ", " ("CPU Affinity, NUMA Affinity"); "" for none.
std::string TopoTitleList(const TopoHeader& header);

}  // namespace topofit
