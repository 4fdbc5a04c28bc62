// ParseTopoMatrix: reads `nvidia-smi topo -m` text. See topo_parser.h for the contract.
//
// Shape of the input: optional blank lines, one header row (topo_header.h), one row per device in header
// order (topo_row.h), then optionally blank lines and the legend blocks (topo_trailer.h). Each line is
// split on tabs when it has any (nvidia-smi's own output, where an empty field is a real empty value) and
// on runs of blanks otherwise (published copies with tabs expanded). The matrix may end early only after
// the last GPU row: the NIC rows it lacks are then filled from the rows it has (nic_links.h).

#include "topology/topo_parser.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "topology/nic_links.h"
#include "topology/topo_header.h"
#include "topology/topo_parse_error.h"
#include "topology/topo_row.h"
#include "topology/topo_text.h"
#include "topology/topo_trailer.h"

namespace topofit {

namespace {

using Cells = std::vector<std::vector<TopoCell>>;

// The rows read after the header on line `header_index` (0-based) of `lines`.
struct Rows {
  Cells cells;
  std::vector<TopoRowValues> values;  // Per GPU.
  int count = 0;                      // All devices, or fewer when the matrix ends after the GPU rows.
};

// Reads the device rows that follow the header; stops early (after the GPU rows only) at the end of the
// input, a blank line or a legend.
Result<Rows> ReadRows(const std::vector<std::string_view>& lines, size_t header_index, const TopoHeader& h) {
  const int n = static_cast<int>(h.devices.size());
  Rows rows{Cells(n, std::vector<TopoCell>(n)), std::vector<TopoRowValues>(h.gpus), 0};
  for (; rows.count < n; ++rows.count) {
    const int r = rows.count;
    size_t li = header_index + 1 + r;
    if (li >= lines.size() || IsBlank(lines[li]) || StartsTopoLegend(lines[li])) {
      if (r >= h.gpus) break;
      std::string got = li >= lines.size() ? "the end of the input" : IsBlank(lines[li]) ? "a blank line" : "the legend";
      return TopoParseError(static_cast<int>(li) + 1, 1,
                            fmt::format("expected row '{}' (the header lists {} GPU{}, each needs its row), got {}",
                                        h.devices[r], h.gpus, h.gpus == 1 ? "" : "s", got));
    }
    TopoRowValues* values = r < h.gpus ? &rows.values[r] : nullptr;
    if (Status s = ParseTopoRow(lines[li], static_cast<int>(li) + 1, h, r, &rows.cells, values); !s) return Error{s.error()};
  }
  // A missing row reads its links to devices with rows from their rows; links between two missing rows
  // are filled later (FillUnknownNicLinks).
  for (int r = rows.count; r < n; ++r) {
    for (int c = 0; c < rows.count; ++c) rows.cells[r][c] = rows.cells[c][r];
    rows.cells[r][r].link = Link{LinkClass::Self, 0};
  }
  return rows;
}

Status CheckSymmetric(const TopoHeader& h, const Cells& cells) {
  const size_t n = h.devices.size();
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < j; ++i) {
      const TopoCell& upper = cells[i][j];
      const TopoCell& lower = cells[j][i];
      if (upper.link == lower.link) continue;
      return TopoParseError(lower.line, lower.column,
                            fmt::format("expected '{}' between {} and {} (the same as {} to {} on line {}; the matrix must be symmetric), got '{}'",
                                        ToString(upper.link), h.devices[j], h.devices[i], h.devices[i], h.devices[j],
                                        upper.line, ToString(lower.link)));
    }
  }
  return Status::Ok();
}

// The warning for a matrix that ends at line `lineno` after `rows` rows, before the last NIC row:
//   "line 12: no rows for NIC0 to NIC7 (the matrix ends after the GPU rows); links between these NICs
//    are unknown, each is taken as the closest link through a device that has a row"
//   "line 19: no row for NIC7 (the matrix ends after 7 of 8 NIC rows); its links are all in the other rows"
std::string MissingNicRowsWarning(const TopoHeader& h, int rows, int lineno) {
  const int n = static_cast<int>(h.devices.size());
  std::string ends = rows == h.gpus ? "after the GPU rows" : fmt::format("after {} of {} NIC rows", rows - h.gpus, n - h.gpus);
  if (n - rows == 1) {
    return fmt::format("line {}: no row for {} (the matrix ends {}); its links are all in the other rows", lineno,
                       h.devices[rows], ends);
  }
  return fmt::format(
      "line {}: no rows for {} to {} (the matrix ends {}); links between these NICs are unknown, each is taken as the "
      "closest link through a device that has a row",
      lineno, h.devices[rows], h.devices[n - 1], ends);
}

// The TopoMatrix of the rows read; NIC links between two missing rows are filled as nic_links.h says.
TopoMatrix Assemble(const TopoHeader& h, const Rows& rows) {
  const int n = static_cast<int>(h.devices.size());
  const int nics = n - h.gpus;
  TopoMatrix m;
  m.gpu_names.assign(h.devices.begin(), h.devices.begin() + h.gpus);
  m.nic_names.assign(h.devices.begin() + h.gpus, h.devices.end());
  m.gpu_links.assign(h.gpus, std::vector<Link>(h.gpus));
  m.gpu_nic.assign(h.gpus, std::vector<Link>(nics));
  m.nic_links.assign(nics, std::vector<Link>(nics));
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      Link l = rows.cells[r][c].link;
      if (r < h.gpus && c < h.gpus) m.gpu_links[r][c] = l;
      else if (r < h.gpus) m.gpu_nic[r][c - h.gpus] = l;
      else if (c >= h.gpus) m.nic_links[r - h.gpus][c - h.gpus] = l;
    }
  }
  for (const TopoRowValues& v : rows.values) {
    m.cpu_affinity.push_back(v.cpu);
    m.numa_affinity.push_back(v.numa);
    m.numa_affinity_list.push_back(v.numa_list);
    m.gpu_numa_id.push_back(v.gpu_numa);
  }
  if (rows.count < n) {
    std::vector<bool> row_known(nics);
    for (int k = 0; k < nics; ++k) row_known[k] = h.gpus + k < rows.count;
    FillUnknownNicLinks(row_known, &m);
  }
  return m;
}

Result<TopoMatrix> ParseClean(std::string_view text) {
  std::vector<std::string_view> lines = SplitLines(text);
  size_t i = 0;
  while (i < lines.size() && IsBlank(lines[i])) ++i;
  if (i == lines.size()) {
    return TopoParseError(static_cast<int>(i) + 1, 1, "expected a header row starting with 'GPU0', got the end of the input");
  }
  Result<TopoHeader> header = ParseTopoHeader(lines[i], static_cast<int>(i) + 1);
  if (!header) return Error{header.error()};
  Result<Rows> rows = ReadRows(lines, i, *header);
  if (!rows) return Error{rows.error()};
  if (Status s = CheckSymmetric(*header, rows->cells); !s) return Error{s.error()};
  TopoMatrix m = Assemble(*header, *rows);
  if (rows->count < static_cast<int>(header->devices.size())) {
    m.warnings.push_back(MissingNicRowsWarning(*header, rows->count, static_cast<int>(i) + 2 + rows->count));
  }
  if (Status s = ParseTopoTrailer(lines, i + 1 + rows->count, rows->count, *header, &m); !s) return Error{s.error()};
  return m;
}

}  // namespace

Result<TopoMatrix> ParseTopoMatrix(std::string_view text) {
  if (text.find('\x1b') == std::string_view::npos) return ParseClean(text);
  return ParseClean(StripTerminalEscapes(text));  // Line and column numbers are those of the text without them.
}

}  // namespace topofit
