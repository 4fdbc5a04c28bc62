// ParseTopoRow: reads one device row of `nvidia-smi topo -m` text. See topo_row.h for the contract.

#include "topology/topo_row.h"

#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "topology/topo_parse_error.h"
#include "topology/topo_text.h"

namespace topofit {

namespace {

// Above any CPU or NUMA node number Linux hands out (CONFIG_NR_CPUS is at most 8192, NUMA nodes 1024).
constexpr int kMaxCpuId = 1 << 16;
constexpr int kMaxNumaId = 4096;

// NUMA Affinity: a node list ("0", "0-1", "0,2"), of which a single node is the GPU's node and several
// leave it unknown.
Status SetNumaAffinity(const TextField& f, int lineno, TopoRowValues* out) {
  std::vector<std::pair<int, int>> ranges;
  if (!ParseIdList(f.text, kMaxNumaId, &ranges)) {
    return TopoParseError(lineno, f.column,
                          fmt::format("expected NUMA Affinity as a NUMA node number or list such as 0, 0-1 or 0,2, or N/A, got '{}'", f.text));
  }
  bool one_node = true;
  for (const auto& [low, high] : ranges) one_node = one_node && low == ranges[0].first && high == low;
  if (one_node) out->numa = ranges[0].first;
  out->numa_list = std::string(f.text);
  return Status::Ok();
}

// One value of a GPU row: CPU Affinity a CPU list ("0-23,48-71", "0,2,4"), NUMA Affinity a node list,
// GPU NUMA ID one node number. Empty and N/A are no value, not an error.
Status SetValue(TopoTitle title, const TextField& f, int lineno, TopoRowValues* out) {
  if (f.text.empty() || f.text == "N/A") return Status::Ok();
  if (title == TopoTitle::kNuma) return SetNumaAffinity(f, lineno, out);
  if (title == TopoTitle::kCpu) {
    std::vector<std::pair<int, int>> ranges;
    if (!ParseIdList(f.text, kMaxCpuId, &ranges)) {
      return TopoParseError(lineno, f.column, fmt::format("expected CPU Affinity as a CPU list such as 0-11,24-35 or N/A, got '{}'", f.text));
    }
    out->cpu = std::string(f.text);
    return Status::Ok();
  }
  int value = 0;
  if (!ParseSmallInt(f.text, kMaxNumaId, &value)) {
    return TopoParseError(lineno, f.column, fmt::format("expected GPU NUMA ID as a NUMA node number or N/A, got '{}'", f.text));
  }
  out->gpu_numa = value;
  return Status::Ok();
}

// nvidia-smi pads some values with an extra tab (NUMA Affinity is printed "0\t\t" to line up under its long
// title), which reads as an empty field right after a value. Drops such padding while there are more
// fields than titles; an empty field that does not follow a value is a real empty.
void DropTabPadding(size_t titles, std::vector<TextField>* vals) {
  while (!vals->empty() && vals->back().text.empty()) vals->pop_back();
  for (size_t k = 1; vals->size() > titles && k < vals->size(); ++k) {
    if ((*vals)[k].text.empty() && !(*vals)[k - 1].text.empty()) vals->erase(vals->begin() + static_cast<long>(k));
  }
}

// Maps the fields after the link cells of a GPU row to the header's titles.
Status ParseValues(std::vector<TextField> vals, bool tabs, const TopoHeader& h, int lineno, TopoRowValues* out) {
  const size_t titles = h.titles.size();
  if (tabs) DropTabPadding(titles, &vals);
  if (vals.size() > titles) {
    std::string what = titles == 0 ? "the end of the line after the link cells"
                                   : fmt::format("at most {} values ({})", titles, TopoTitleList(h));
    return TopoParseError(lineno, vals[titles].column, fmt::format("expected {}, got '{}'", what, vals[titles].text));
  }
  size_t next = 0;
  for (size_t j = 0; j < vals.size(); ++j) {
    size_t pick = next;
    if (!tabs && vals.size() < titles) {
      // Blanks hide empty values, so place each value under the title it lines up with.
      auto distance = [&](size_t t) { return std::abs(vals[j].visual - h.titles[t].visual); };
      for (size_t t = next; t + (vals.size() - j) <= titles; ++t) {
        if (distance(t) < distance(pick)) pick = t;
      }
    }
    if (Status s = SetValue(h.titles[pick].spec->title, vals[j], lineno, out); !s) return s;
    next = pick + 1;
  }
  return Status::Ok();
}

// The row starts with the name of device r.
Status CheckRowName(const std::vector<TextField>& fields, int lineno, const TopoHeader& h, int r) {
  const std::string& expect = h.devices[r];
  if (!fields.empty() && fields[0].text == expect) return Status::Ok();
  std::string got = fields.empty() || fields[0].text.empty() ? "an empty name" : fmt::format("'{}'", fields[0].text);
  bool known = false;
  for (const auto& d : h.devices) known = known || (!fields.empty() && d == fields[0].text);
  return TopoParseError(lineno, fields.empty() ? 1 : fields[0].column,
                        fmt::format("expected row '{}', got {}{}", expect, got, known ? " (rows must follow the header's column order)" : ""));
}

// The link cell `f` of row r, column c.
Result<Link> ParseLinkCell(const TextField& f, int lineno, const TopoHeader& h, int r, int c) {
  const std::string& row = h.devices[r];
  const std::string& col = h.devices[c];
  if (f.text.empty()) return TopoParseError(lineno, f.column, fmt::format("expected a link class for column '{}', got an empty field", col));
  std::optional<Link> link = ParseLink(f.text);
  if (!link) {
    return TopoParseError(lineno, f.column, fmt::format("expected a link class (X, SYS, NODE, PHB, PXB, PIX, NV#) for column '{}', got '{}'", col, f.text));
  }
  if (c == r && link->cls != LinkClass::Self) {
    return TopoParseError(lineno, f.column, fmt::format("expected 'X' on the diagonal ({} to itself), got '{}'", row, f.text));
  }
  if (c != r && link->cls == LinkClass::Self) {
    return TopoParseError(lineno, f.column, fmt::format("expected a link class between {} and {}, got 'X' (X marks only the diagonal)", row, col));
  }
  if (link->cls == LinkClass::Nv && (r >= h.gpus || c >= h.gpus)) {
    return TopoParseError(lineno, f.column, fmt::format("expected a PCIe link class between {} and {}, got '{}' (NVLink joins GPUs only)", row, col, f.text));
  }
  return *link;
}

// A NIC row ends after its link cells (empty tab fields aside).
Status CheckNicRowEnd(const std::vector<TextField>& rest, int lineno, int n) {
  for (const TextField& f : rest) {
    if (!f.text.empty()) {
      return TopoParseError(lineno, f.column, fmt::format("expected the end of the line after {} link cells (NIC rows have no affinity columns), got '{}'", n, f.text));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseTopoRow(std::string_view line, int lineno, const TopoHeader& h, int r,
                    std::vector<std::vector<TopoCell>>* cells, TopoRowValues* values) {
  const bool tabs = line.find('\t') != std::string_view::npos;
  std::vector<TextField> fields = tabs ? SplitOnTabs(line) : SplitOnWhitespace(line);
  if (Status s = CheckRowName(fields, lineno, h, r); !s) return s;
  const int n = static_cast<int>(h.devices.size());
  for (int c = 0; c < n; ++c) {
    if (static_cast<size_t>(c) + 1 >= fields.size()) {
      return TopoParseError(lineno, static_cast<int>(line.size()) + 1,
                            fmt::format("expected a link class for column '{}' (the header lists {} columns), got the end of the line", h.devices[c], n));
    }
    Result<Link> link = ParseLinkCell(fields[c + 1], lineno, h, r, c);
    if (!link) return Error{link.error()};
    (*cells)[r][c] = {*link, lineno, fields[c + 1].column};
  }
  std::vector<TextField> rest(fields.begin() + n + 1, fields.end());
  if (r >= h.gpus) return CheckNicRowEnd(rest, lineno, n);
  return ParseValues(std::move(rest), tabs, h, lineno, values);
}

}  // namespace topofit
