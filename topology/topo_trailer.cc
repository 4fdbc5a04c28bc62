// ParseTopoTrailer: reads the legends after the matrix. See topo_trailer.h for the contract.

#include "topology/topo_trailer.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "topology/topo_parse_error.h"
#include "topology/topo_text.h"

namespace topofit {

namespace {

// One "NIC0: mlx5_0" line of the NIC legend.
Status AddNicLegendEntry(std::string_view t, int lineno, int column, const TopoHeader& h, TopoMatrix* m) {
  size_t colon = t.find(':');
  std::string_view name = colon == std::string_view::npos ? t : Trim(t.substr(0, colon));
  std::string_view value = colon == std::string_view::npos ? "" : Trim(t.substr(colon + 1));
  bool known = false;
  for (int d = h.gpus; d < static_cast<int>(h.devices.size()); ++d) known = known || h.devices[d] == name;
  if (colon == std::string_view::npos || value.empty() || !known) {
    return TopoParseError(lineno, column, fmt::format("expected a NIC legend entry naming a NIC column, such as 'NIC0: mlx5_0', got '{}'", t));
  }
  m->nic_legend[std::string(name)] = std::string(value);
  return Status::Ok();
}

}  // namespace

bool StartsTopoLegend(std::string_view line) {
  std::string_view t = Trim(line);
  return t == "Legend:" || t == "NIC Legend:";
}

Status ParseTopoTrailer(const std::vector<std::string_view>& lines, size_t from, int rows, const TopoHeader& h,
                        TopoMatrix* m) {
  enum { kNone, kLegend, kNicLegend } mode = kNone;
  for (size_t i = from; i < lines.size(); ++i) {
    std::string_view t = Trim(lines[i]);
    const int lineno = static_cast<int>(i) + 1;
    const int column = static_cast<int>(lines[i].find_first_not_of(" \t")) + 1;
    if (t.empty()) continue;
    if (t == "Legend:") { mode = kLegend; continue; }
    if (t == "NIC Legend:") { mode = kNicLegend; continue; }
    if (mode == kLegend) continue;
    if (mode == kNone) {
      std::vector<TextField> tokens = SplitOnWhitespace(t);
      return TopoParseError(lineno, column,
                            fmt::format("expected the end of the matrix after {} rows (the header lists {} devices), got '{}'",
                                        rows, h.devices.size(), tokens[0].text));
    }
    if (Status s = AddNicLegendEntry(t, lineno, column, h, m); !s) return s;
  }
  return Status::Ok();
}

}  // namespace topofit
