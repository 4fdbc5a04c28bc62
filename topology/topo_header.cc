// ParseTopoHeader: reads the header row of `nvidia-smi topo -m` text. See topo_header.h for the contract.

#include "topology/topo_header.h"

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "topology/gpu_set.h"
#include "topology/link_class.h"
#include "topology/topo_parse_error.h"
#include "topology/topo_text.h"

namespace topofit {

namespace {

const std::vector<TopoTitleSpec>& Titles() {
  static const std::vector<TopoTitleSpec> titles = {
      {TopoTitle::kCpu, {"CPU", "Affinity"}, "CPU Affinity"},
      {TopoTitle::kNuma, {"NUMA", "Affinity"}, "NUMA Affinity"},
      {TopoTitle::kGpuNuma, {"GPU", "NUMA", "ID"}, "GPU NUMA ID"}};
  return titles;
}

const TopoTitleSpec* MatchTitle(const std::vector<TextField>& tokens, size_t i) {
  for (const TopoTitleSpec& spec : Titles()) {
    if (i + spec.words.size() > tokens.size()) continue;
    bool match = true;
    for (size_t w = 0; w < spec.words.size(); ++w) match = match && tokens[i + w].text == spec.words[w];
    if (match) return &spec;
  }
  return nullptr;
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

// Adds the device named by `t` to `h`, or says why it cannot be the next column.
Status AddDevice(const TextField& t, int lineno, std::set<std::string_view>* seen, TopoHeader* h) {
  auto fail = [&](const std::string& what) { return TopoParseError(lineno, t.column, what); };
  if (h->devices.empty() && t.text != "GPU0") {
    // A copy that lost the separators between names reads "GPU0GPU1GPU2...".
    bool run_together = t.text.size() > 4 && t.text.substr(0, 4) == "GPU0" && t.text.find("GPU", 4) != std::string_view::npos;
    return fail(fmt::format("expected the header row to start with 'GPU0', got '{}'{}", t.text,
                            run_together ? " (column names run together: the separators between them are missing)" : ""));
  }
  if (!seen->insert(t.text).second) return fail(fmt::format("expected distinct column names, got '{}' twice", t.text));
  int index = 0;
  if (IsGpuName(t.text, &index)) {
    if (h->devices.size() != static_cast<size_t>(h->gpus)) {
      return fail(fmt::format("expected a NIC column (GPU columns come first), got '{}'", t.text));
    }
    if (h->gpus == GpuSet::kMaxGpus) return fail(fmt::format("expected at most {} GPUs, got '{}'", GpuSet::kMaxGpus, t.text));
    if (index != h->gpus) return fail(fmt::format("expected 'GPU{}' (GPU columns in order), got '{}'", h->gpus, t.text));
    ++h->gpus;
  } else if (!IsDeviceName(t.text)) {
    return fail(fmt::format("expected a device name (GPU#, NIC#, mlx5_#) or a column title, got '{}'", t.text));
  }
  if (h->devices.size() == kMaxTopoDevices) return fail(fmt::format("expected at most {} devices, got more", kMaxTopoDevices));
  h->devices.emplace_back(t.text);
  return Status::Ok();
}

// Reads the titles from tokens[i] on.
Status AddTitles(const std::vector<TextField>& tokens, size_t i, int lineno, TopoHeader* h) {
  while (i < tokens.size()) {
    const TopoTitleSpec* spec = MatchTitle(tokens, i);
    if (!spec) {
      return TopoParseError(lineno, tokens[i].column,
                            fmt::format("expected a column title (CPU Affinity, NUMA Affinity, GPU NUMA ID), got '{}'",
                                        tokens[i].text));
    }
    for (const auto& t : h->titles) {
      if (t.spec == spec) {
        return TopoParseError(lineno, tokens[i].column, fmt::format("expected '{}' once, got it twice", spec->name));
      }
    }
    h->titles.push_back({spec, tokens[i].visual});
    i += spec->words.size();
  }
  return Status::Ok();
}

}  // namespace

Result<TopoHeader> ParseTopoHeader(std::string_view line, int lineno) {
  std::vector<TextField> tokens = SplitOnWhitespace(line);
  TopoHeader h;
  std::set<std::string_view> seen;
  size_t i = 0;
  for (; i < tokens.size() && !MatchTitle(tokens, i); ++i) {
    if (Status s = AddDevice(tokens[i], lineno, &seen, &h); !s) return Error{s.error()};
  }
  if (h.devices.empty()) {
    int column = tokens.empty() ? 1 : tokens[0].column;
    std::string got = tokens.empty() ? "nothing" : fmt::format("'{}'", tokens[0].text);
    return TopoParseError(lineno, column, fmt::format("expected the header row to start with 'GPU0', got {}", got));
  }
  if (Status s = AddTitles(tokens, i, lineno, &h); !s) return Error{s.error()};
  return h;
}

std::string TopoTitleList(const TopoHeader& h) {
  std::string out;
  for (const auto& t : h.titles) out += (out.empty() ? "" : ", ") + std::string(t.spec->name);
  return out;
}

}  // namespace topofit
