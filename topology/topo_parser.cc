// ParseTopoMatrix: reads `nvidia-smi topo -m` text. See topo_parser.h for the contract.
//
// Shape of the input: optional blank lines, one header row (device columns GPU0.. then NIC columns,
// then optional titles "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"), one row per device in header
// order, then optionally blank lines and the "Legend:" / "NIC Legend:" blocks. Each line is split on
// tabs when it has any (nvidia-smi's own output, where an empty field is a real empty value) and on
// runs of blanks otherwise (published copies with tabs expanded). The matrix may end early only after
// the last GPU row: the NIC rows it lacks are then filled from the rows it has (nic_links.h).

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "base/strings.h"
#include "topology/gpu_set.h"
#include "topology/nic_links.h"
#include "topology/topo_parser.h"
#include "topology/topo_text.h"

namespace topofit {

namespace {

// Far above any real node (GPUs + NICs); bounds the work done on garbage input.
constexpr int kMaxDevices = 512;
// Above any CPU or NUMA node number Linux hands out (CONFIG_NR_CPUS is at most 8192, NUMA nodes 1024).
constexpr int kMaxCpuId = 1 << 16;
constexpr int kMaxNumaId = 4096;

enum class Title { kCpu, kNuma, kGpuNuma };

struct TitleSpec {
  Title title;
  std::vector<std::string_view> words;
  std::string_view name;
};

const std::vector<TitleSpec>& Titles() {
  static const std::vector<TitleSpec> titles = {
      {Title::kCpu, {"CPU", "Affinity"}, "CPU Affinity"},
      {Title::kNuma, {"NUMA", "Affinity"}, "NUMA Affinity"},
      {Title::kGpuNuma, {"GPU", "NUMA", "ID"}, "GPU NUMA ID"}};
  return titles;
}

struct TitleColumn {
  const TitleSpec* spec;
  int visual;  // Display column of the title, to place values in space-aligned rows.
};

struct Header {
  std::vector<std::string> devices;  // GPUs first, then NICs, in column order.
  int gpus = 0;
  std::vector<TitleColumn> titles;
};

struct Cell {
  Link link;
  int line = 0;
  int column = 0;
};

struct RowValues {
  std::string cpu;
  std::optional<int> numa;  // The node when NUMA Affinity names exactly one.
  std::string numa_list;    // NUMA Affinity as printed.
  std::optional<int> gpu_numa;
};

Error At(int line, int column, const std::string& what) {
  return Error{fmt::format("line {}, column {}: {}", line, column, what)};
}

const TitleSpec* MatchTitle(const std::vector<TextField>& tokens, size_t i) {
  for (const TitleSpec& spec : Titles()) {
    if (i + spec.words.size() > tokens.size()) continue;
    bool match = true;
    for (size_t w = 0; w < spec.words.size(); ++w) match = match && tokens[i + w].text == spec.words[w];
    if (match) return &spec;
  }
  return nullptr;
}

bool ParseSmallInt(std::string_view s, int limit, int* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0 && *out < limit;
}

bool IsGpuName(std::string_view s, int* index) {
  return s.size() > 3 && s.substr(0, 3) == "GPU" && ParseSmallInt(s.substr(3), 1 << 20, index);
}

// NIC names as nvidia-smi prints them: NIC0, mlx5_0, ... - an identifier that is not a link class.
bool IsDeviceName(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0])) || ParseLink(s)) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != ':' && c != '-') return false;
  }
  return true;
}

std::string TitleList(const Header& h) {
  std::string out;
  for (const auto& t : h.titles) out += (out.empty() ? "" : ", ") + std::string(t.spec->name);
  return out;
}

Result<Header> ParseHeader(std::string_view line, int lineno) {
  std::vector<TextField> tokens = SplitOnWhitespace(line);
  Header h;
  std::set<std::string_view> seen;
  size_t i = 0;
  for (; i < tokens.size() && !MatchTitle(tokens, i); ++i) {
    const TextField& t = tokens[i];
    auto fail = [&](const std::string& what) { return At(lineno, t.column, what); };
    if (h.devices.empty() && t.text != "GPU0") {
      // A copy that lost the separators between names reads "GPU0GPU1GPU2...".
      bool run_together = t.text.size() > 4 && t.text.substr(0, 4) == "GPU0" && t.text.find("GPU", 4) != std::string_view::npos;
      return fail(fmt::format("expected the header row to start with 'GPU0', got '{}'{}", t.text,
                              run_together ? " (column names run together: the separators between them are missing)" : ""));
    }
    if (!seen.insert(t.text).second) return fail(fmt::format("expected distinct column names, got '{}' twice", t.text));
    int index = 0;
    if (IsGpuName(t.text, &index)) {
      if (h.devices.size() != static_cast<size_t>(h.gpus)) {
        return fail(fmt::format("expected a NIC column (GPU columns come first), got '{}'", t.text));
      }
      if (h.gpus == GpuSet::kMaxGpus) {
        return fail(fmt::format("expected at most {} GPUs, got '{}'", GpuSet::kMaxGpus, t.text));
      }
      if (index != h.gpus) return fail(fmt::format("expected 'GPU{}' (GPU columns in order), got '{}'", h.gpus, t.text));
      ++h.gpus;
    } else if (!IsDeviceName(t.text)) {
      return fail(fmt::format("expected a device name (GPU#, NIC#, mlx5_#) or a column title, got '{}'", t.text));
    }
    if (h.devices.size() == kMaxDevices) return fail(fmt::format("expected at most {} devices, got more", kMaxDevices));
    h.devices.emplace_back(t.text);
  }
  if (h.devices.empty()) {
    int column = tokens.empty() ? 1 : tokens[0].column;
    std::string got = tokens.empty() ? "nothing" : fmt::format("'{}'", tokens[0].text);
    return At(lineno, column, fmt::format("expected the header row to start with 'GPU0', got {}", got));
  }
  while (i < tokens.size()) {
    const TitleSpec* spec = MatchTitle(tokens, i);
    if (!spec) {
      return At(lineno, tokens[i].column,
                fmt::format("expected a column title (CPU Affinity, NUMA Affinity, GPU NUMA ID), got '{}'",
                            tokens[i].text));
    }
    for (const auto& t : h.titles) {
      if (t.spec == spec) return At(lineno, tokens[i].column, fmt::format("expected '{}' once, got it twice", spec->name));
    }
    h.titles.push_back({spec, tokens[i].visual});
    i += spec->words.size();
  }
  return h;
}

// One value of a GPU row. CPU Affinity is a CPU list ("0-23,48-71", "0,2,4"); NUMA Affinity a NUMA
// node list ("0", "0-1", "0,2"), of which a single node is the GPU's node and several leave it unknown;
// GPU NUMA ID one node number. Empty and N/A are no value, not an error.
Status SetValue(Title title, const TextField& f, int lineno, RowValues* out) {
  if (f.text.empty() || f.text == "N/A") return Status::Ok();
  std::vector<std::pair<int, int>> ranges;
  if (title == Title::kCpu) {
    if (!ParseIdList(f.text, kMaxCpuId, &ranges)) {
      return At(lineno, f.column, fmt::format("expected CPU Affinity as a CPU list such as 0-11,24-35 or N/A, got '{}'", f.text));
    }
    out->cpu = std::string(f.text);
    return Status::Ok();
  }
  if (title == Title::kNuma) {
    if (!ParseIdList(f.text, kMaxNumaId, &ranges)) {
      return At(lineno, f.column,
                fmt::format("expected NUMA Affinity as a NUMA node number or list such as 0, 0-1 or 0,2, or N/A, got '{}'", f.text));
    }
    bool one_node = true;
    for (const auto& [low, high] : ranges) one_node = one_node && low == ranges[0].first && high == low;
    if (one_node) out->numa = ranges[0].first;
    out->numa_list = std::string(f.text);
    return Status::Ok();
  }
  int value = 0;
  if (!ParseSmallInt(f.text, kMaxNumaId, &value)) {
    return At(lineno, f.column, fmt::format("expected GPU NUMA ID as a NUMA node number or N/A, got '{}'", f.text));
  }
  out->gpu_numa = value;
  return Status::Ok();
}

// Maps the fields after the link cells of a GPU row to the header's titles.
Status ParseValues(std::vector<TextField> vals, bool tabs, const Header& h, int lineno, RowValues* out) {
  const size_t titles = h.titles.size();
  if (tabs) {
    while (!vals.empty() && vals.back().text.empty()) vals.pop_back();
    // nvidia-smi pads some values with an extra tab (NUMA Affinity is printed "0\t\t" to line up under
    // its long title), which reads as an empty field right after a value. Drop such padding while
    // there are more fields than titles; an empty field that does not follow a value is a real empty.
    for (size_t k = 1; vals.size() > titles && k < vals.size(); ++k) {
      if (vals[k].text.empty() && !vals[k - 1].text.empty()) vals.erase(vals.begin() + static_cast<long>(k));
    }
  }
  if (vals.size() > titles) {
    std::string what = titles == 0 ? "the end of the line after the link cells"
                                   : fmt::format("at most {} values ({})", titles, TitleList(h));
    return At(lineno, vals[titles].column, fmt::format("expected {}, got '{}'", what, vals[titles].text));
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

Status ParseRow(std::string_view line, int lineno, const Header& h, int r, std::vector<std::vector<Cell>>* cells,
                RowValues* values) {
  const bool tabs = line.find('\t') != std::string_view::npos;
  std::vector<TextField> fields = tabs ? SplitOnTabs(line) : SplitOnWhitespace(line);
  const std::string& expect = h.devices[r];
  if (fields.empty() || fields[0].text != expect) {
    std::string got = fields.empty() || fields[0].text.empty() ? "an empty name" : fmt::format("'{}'", fields[0].text);
    bool known = false;
    for (const auto& d : h.devices) known = known || (!fields.empty() && d == fields[0].text);
    return At(lineno, fields.empty() ? 1 : fields[0].column,
              fmt::format("expected row '{}', got {}{}", expect, got, known ? " (rows must follow the header's column order)" : ""));
  }
  const int n = static_cast<int>(h.devices.size());
  for (int c = 0; c < n; ++c) {
    const std::string& col = h.devices[c];
    if (static_cast<size_t>(c) + 1 >= fields.size()) {
      return At(lineno, static_cast<int>(line.size()) + 1,
                fmt::format("expected a link class for column '{}' (the header lists {} columns), got the end of the line", col, n));
    }
    const TextField& f = fields[c + 1];
    if (f.text.empty()) return At(lineno, f.column, fmt::format("expected a link class for column '{}', got an empty field", col));
    std::optional<Link> link = ParseLink(f.text);
    if (!link) {
      return At(lineno, f.column, fmt::format("expected a link class (X, SYS, NODE, PHB, PXB, PIX, NV#) for column '{}', got '{}'", col, f.text));
    }
    if (c == r && link->cls != LinkClass::Self) {
      return At(lineno, f.column, fmt::format("expected 'X' on the diagonal ({} to itself), got '{}'", expect, f.text));
    }
    if (c != r && link->cls == LinkClass::Self) {
      return At(lineno, f.column, fmt::format("expected a link class between {} and {}, got 'X' (X marks only the diagonal)", expect, col));
    }
    if (link->cls == LinkClass::Nv && (r >= h.gpus || c >= h.gpus)) {
      return At(lineno, f.column, fmt::format("expected a PCIe link class between {} and {}, got '{}' (NVLink joins GPUs only)", expect, col, f.text));
    }
    (*cells)[r][c] = {*link, lineno, f.column};
  }
  std::vector<TextField> rest(fields.begin() + n + 1, fields.end());
  if (r >= h.gpus) {
    for (const TextField& f : rest) {
      if (!f.text.empty()) {
        return At(lineno, f.column, fmt::format("expected the end of the line after {} link cells (NIC rows have no affinity columns), got '{}'", n, f.text));
      }
    }
    return Status::Ok();
  }
  return ParseValues(std::move(rest), tabs, h, lineno, values);
}

Status CheckSymmetric(const Header& h, const std::vector<std::vector<Cell>>& cells) {
  const size_t n = h.devices.size();
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < j; ++i) {
      const Cell& upper = cells[i][j];
      const Cell& lower = cells[j][i];
      if (upper.link == lower.link) continue;
      return At(lower.line, lower.column,
                fmt::format("expected '{}' between {} and {} (the same as {} to {} on line {}; the matrix must be symmetric), got '{}'",
                            ToString(upper.link), h.devices[j], h.devices[i], h.devices[i], h.devices[j], upper.line,
                            ToString(lower.link)));
    }
  }
  return Status::Ok();
}

bool StartsLegend(std::string_view line) {
  std::string_view t = Trim(line);
  return t == "Legend:" || t == "NIC Legend:";
}

// Reads what follows the `rows` rows of the matrix: blank lines and the legend blocks; fills the NIC legend.
Status ParseTrailer(const std::vector<std::string_view>& lines, size_t from, int rows, const Header& h, TopoMatrix* m) {
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
      return At(lineno, column,
                fmt::format("expected the end of the matrix after {} rows (the header lists {} devices), got '{}'",
                            rows, h.devices.size(), tokens[0].text));
    }
    size_t colon = t.find(':');
    std::string_view name = colon == std::string_view::npos ? t : Trim(t.substr(0, colon));
    std::string_view value = colon == std::string_view::npos ? "" : Trim(t.substr(colon + 1));
    bool known = false;
    for (int d = h.gpus; d < static_cast<int>(h.devices.size()); ++d) known = known || h.devices[d] == name;
    if (colon == std::string_view::npos || value.empty() || !known) {
      return At(lineno, column, fmt::format("expected a NIC legend entry naming a NIC column, such as 'NIC0: mlx5_0', got '{}'", t));
    }
    m->nic_legend[std::string(name)] = std::string(value);
  }
  return Status::Ok();
}

// The warning for a matrix that ends at line `lineno` after `rows` rows, before the last NIC row:
//   "line 12: no rows for NIC0 to NIC7 (the matrix ends after the GPU rows); links between these NICs
//    are unknown, each is taken as the closest link through a device that has a row"
//   "line 19: no row for NIC7 (the matrix ends after 7 of 8 NIC rows); its links are all in the other rows"
std::string MissingNicRowsWarning(const Header& h, int rows, int lineno) {
  const int n = static_cast<int>(h.devices.size());
  const int missing = n - rows;
  std::string ends = rows == h.gpus ? "after the GPU rows" : fmt::format("after {} of {} NIC rows", rows - h.gpus, n - h.gpus);
  if (missing == 1) {
    return fmt::format("line {}: no row for {} (the matrix ends {}); its links are all in the other rows", lineno,
                       h.devices[rows], ends);
  }
  return fmt::format(
      "line {}: no rows for {} to {} (the matrix ends {}); links between these NICs are unknown, each is taken as the "
      "closest link through a device that has a row",
      lineno, h.devices[rows], h.devices[n - 1], ends);
}

Result<TopoMatrix> ParseClean(std::string_view text);

}  // namespace

Result<TopoMatrix> ParseTopoMatrix(std::string_view text) {
  if (text.find('\x1b') == std::string_view::npos) return ParseClean(text);
  return ParseClean(StripTerminalEscapes(text));  // Line and column numbers are those of the text without them.
}

namespace {

Result<TopoMatrix> ParseClean(std::string_view text) {
  std::vector<std::string_view> lines = SplitLines(text);
  size_t i = 0;
  while (i < lines.size() && IsBlank(lines[i])) ++i;
  if (i == lines.size()) {
    return At(static_cast<int>(i) + 1, 1, "expected a header row starting with 'GPU0', got the end of the input");
  }
  Result<Header> header = ParseHeader(lines[i], static_cast<int>(i) + 1);
  if (!header) return Error{header.error()};
  const Header& h = *header;
  const int n = static_cast<int>(h.devices.size());
  std::vector<std::vector<Cell>> cells(n, std::vector<Cell>(n));
  std::vector<RowValues> values(h.gpus);
  int rows = 0;  // Rows read: all n, or fewer when the matrix ends after the GPU rows.
  for (; rows < n; ++rows) {
    size_t li = i + 1 + rows;
    if (li >= lines.size() || IsBlank(lines[li]) || StartsLegend(lines[li])) {
      if (rows >= h.gpus) break;
      std::string got = li >= lines.size() ? "the end of the input" : IsBlank(lines[li]) ? "a blank line" : "the legend";
      return At(static_cast<int>(li) + 1, 1,
                fmt::format("expected row '{}' (the header lists {} GPU{}, each needs its row), got {}", h.devices[rows],
                            h.gpus, h.gpus == 1 ? "" : "s", got));
    }
    RowValues* row_values = rows < h.gpus ? &values[rows] : nullptr;
    if (Status s = ParseRow(lines[li], static_cast<int>(li) + 1, h, rows, &cells, row_values); !s) return Error{s.error()};
  }
  // A missing row reads its links to devices with rows from their rows; links between two missing rows
  // are filled below (FillUnknownNicLinks).
  for (int r = rows; r < n; ++r) {
    for (int c = 0; c < rows; ++c) cells[r][c] = cells[c][r];
    cells[r][r].link = Link{LinkClass::Self, 0};
  }
  if (Status s = CheckSymmetric(h, cells); !s) return Error{s.error()};

  TopoMatrix m;
  m.gpu_names.assign(h.devices.begin(), h.devices.begin() + h.gpus);
  m.nic_names.assign(h.devices.begin() + h.gpus, h.devices.end());
  const int nics = n - h.gpus;
  m.gpu_links.assign(h.gpus, std::vector<Link>(h.gpus));
  m.gpu_nic.assign(h.gpus, std::vector<Link>(nics));
  m.nic_links.assign(nics, std::vector<Link>(nics));
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      Link l = cells[r][c].link;
      if (r < h.gpus && c < h.gpus) m.gpu_links[r][c] = l;
      else if (r < h.gpus) m.gpu_nic[r][c - h.gpus] = l;
      else if (c >= h.gpus) m.nic_links[r - h.gpus][c - h.gpus] = l;
    }
  }
  for (const RowValues& v : values) {
    m.cpu_affinity.push_back(v.cpu);
    m.numa_affinity.push_back(v.numa);
    m.numa_affinity_list.push_back(v.numa_list);
    m.gpu_numa_id.push_back(v.gpu_numa);
  }
  if (rows < n) {
    std::vector<bool> row_known(nics);
    for (int k = 0; k < nics; ++k) row_known[k] = h.gpus + k < rows;
    FillUnknownNicLinks(row_known, &m);
    m.warnings.push_back(MissingNicRowsWarning(h, rows, static_cast<int>(i) + 2 + rows));
  }
  if (Status s = ParseTrailer(lines, i + 1 + rows, rows, h, &m); !s) return Error{s.error()};
  return m;
}

}  // namespace

}  // namespace topofit
