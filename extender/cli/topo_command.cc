// `topofit topo`: shows how topofit understands one node - an `nvidia-smi topo -m` file (or stdin, or
// a built-in profile): the matrix, the modelled bandwidths, each GPU's NUMA node and nearest NICs, the
// node graph, and the best GPU set of every size on an idle node. Text for people, --json for tools.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/log.h"
#include "extender/cli/command.h"
#include "topology/node_graph.h"
#include "topology/profiles.h"
#include "topology/topo_parser.h"
#include "topology/topology.h"

namespace topofit::cli {
namespace {

struct TopoArgs {
  std::string file;
  std::string profile;
  bool json = false;
  bool list_profiles = false;
};

// The matrix to show and the name to report errors under; an Error for unreadable or bad input.
Result<TopoMatrix> LoadMatrix(const TopoArgs& args, std::string* source) {
  if (!args.profile.empty()) {
    *source = "profile " + args.profile;
    return ProfileMatrix(args.profile);
  }
  std::string text;
  *source = args.file == "-" ? "<stdin>" : args.file;
  if (args.file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    auto read = ReadFile(args.file);
    if (!read) return Error{read.error()};
    text = std::move(read).value();
  }
  Result<TopoMatrix> m = ParseTopoMatrix(text);
  if (!m) return Error{fmt::format("{}: {}", *source, m.error())};
  // What the parser accepted on trust goes to stderr through the logger, one line each:
  //   level=warn msg="topology warning" source=FILE detail="line 12: no rows for NIC0 to NIC7 ..."
  for (const std::string& w : m->warnings) Log(LogLevel::kWarn, "topology warning", {{"source", *source}, {"detail", w}});
  return m;
}

std::vector<std::optional<SetChoice>> BestSets(const Topology& t) {
  std::vector<std::optional<SetChoice>> best;
  for (int k = 1; k <= t.gpu_count(); ++k) best.push_back(t.selector().Best(GpuSet::FirstN(t.gpu_count()), k));
  return best;
}

std::string Names(const std::vector<std::string>& names, const std::vector<int>& indices) {
  std::string out;
  for (int i : indices) out += (out.empty() ? "" : ",") + names[i];
  return out;
}

nlohmann::ordered_json ToJson(const Topology& t, const std::string& source) {
  const TopoMatrix& m = t.matrix();
  const int n = t.gpu_count();
  nlohmann::ordered_json j;
  j["source"] = source;
  j["gpu_count"] = n;
  j["nic_count"] = t.nic_count();
  j["gpus"] = m.gpu_names;
  j["nics"] = m.nic_names;
  j["nic_legend"] = m.nic_legend;
  // What the parser took on trust about the text, then what the model took as given.
  std::vector<std::string> warnings = m.warnings;
  warnings.insert(warnings.end(), t.warnings().begin(), t.warnings().end());
  j["warnings"] = warnings;
  j["nvswitch"] = t.graph().has_nvswitch();
  j["pcie_gen"] = t.graph().model().pcie_gen;
  auto& links = j["links"] = nlohmann::ordered_json::array();
  auto& bw = j["bandwidth_gbps"] = nlohmann::ordered_json::array();
  auto& gpu_nic = j["gpu_nic_links"] = nlohmann::ordered_json::array();
  auto& numa = j["numa"] = nlohmann::ordered_json::array();
  auto& nearest = j["nearest_nics"] = nlohmann::ordered_json::array();
  for (int a = 0; a < n; ++a) {
    auto& link_row = links.emplace_back(nlohmann::ordered_json::array());
    auto& bw_row = bw.emplace_back(nlohmann::ordered_json::array());
    for (int b = 0; b < n; ++b) {
      link_row.push_back(ToString(t.link(a, b)));
      bw_row.push_back(t.bandwidth_gbps(a, b));
    }
    auto& nic_row = gpu_nic.emplace_back(nlohmann::ordered_json::array());
    for (Link l : m.gpu_nic[a]) nic_row.push_back(ToString(l));
    std::optional<int> node = t.numa_node(a);
    numa.push_back(node ? nlohmann::ordered_json(*node) : nlohmann::ordered_json(nullptr));
    auto& near = nearest.emplace_back(nlohmann::ordered_json::array());
    for (int nic : t.nearest_nics(a)) near.push_back(m.nic_names[nic]);
  }
  auto& best = j["best_sets"] = nlohmann::ordered_json::object();
  auto& best_bw = j["best_set_bandwidth_gbps"] = nlohmann::ordered_json::object();
  std::vector<std::optional<SetChoice>> sets = BestSets(t);
  for (size_t k = 0; k < sets.size(); ++k) {
    if (!sets[k]) continue;
    best[std::to_string(k + 1)] = sets[k]->gpus.Indices();
    best_bw[std::to_string(k + 1)] = sets[k]->bandwidth_gbps();
  }
  return j;
}

std::string Table(const std::vector<std::string>& cols, const std::vector<std::string>& rows,
                  const std::function<std::string(int, int)>& cell) {
  std::string out = fmt::format("  {:<8}", "");
  for (const auto& c : cols) out += fmt::format("{:>8}", c);
  out += "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += fmt::format("  {:<8}", rows[r]);
    for (size_t c = 0; c < cols.size(); ++c) out += fmt::format("{:>8}", cell(static_cast<int>(r), static_cast<int>(c)));
    out += "\n";
  }
  return out;
}

std::string Summary(const Topology& t, const std::string& source) {
  const TopoMatrix& m = t.matrix();
  const int n = t.gpu_count();
  std::string out = fmt::format("{}: {} GPU{}, {} NIC{}{}\n\nLink classes (as the matrix says):\n", source, n,
                                n == 1 ? "" : "s", t.nic_count(), t.nic_count() == 1 ? "" : "s",
                                t.graph().has_nvswitch() ? ", NVSwitch fabric" : "");
  std::vector<std::string> devices = m.gpu_names;
  devices.insert(devices.end(), m.nic_names.begin(), m.nic_names.end());
  out += Table(devices, m.gpu_names, [&](int r, int c) {
    return ToString(c < n ? m.gpu_links[r][c] : m.gpu_nic[r][c - n]);
  });
  out += "\nEffective GPU-to-GPU bandwidth, GB/s per direction (widest path in the node graph):\n";
  out += Table(m.gpu_names, m.gpu_names, [&](int r, int c) {
    return r == c ? std::string("-") : fmt::format("{:.1f}", t.bandwidth_gbps(r, c));
  });
  out += "\nGPUs:\n";
  for (int g = 0; g < n; ++g) {
    std::optional<int> numa = t.numa_node(g);
    std::vector<int> nics = t.nearest_nics(g);
    std::string nearest = nics.empty() ? "none" : fmt::format("{} ({})", Names(m.nic_names, nics), ToString(m.gpu_nic[g][nics[0]]));
    out += fmt::format("  {:<6} NUMA node {:<4} CPU affinity {:<16} nearest NIC {}\n", m.gpu_names[g],
                       numa ? std::to_string(*numa) : "?", g < static_cast<int>(m.cpu_affinity.size()) && !m.cpu_affinity[g].empty() ? m.cpu_affinity[g] : "?",
                       nearest);
  }
  out += "\nBest set on an idle node (ring all-reduce bandwidth = slowest hop):\n";
  std::vector<std::optional<SetChoice>> sets = BestSets(t);
  for (size_t k = 0; k < sets.size(); ++k) {
    if (!sets[k]) continue;
    out += fmt::format("  k={:<3} {:<40} {:.1f} GB/s\n", k + 1, Names(m.gpu_names, sets[k]->gpus.Indices()), sets[k]->bandwidth_gbps());
  }
  for (const std::string& w : t.warnings()) out += "\nModelled as given: " + w + "\n";
  out += "\nNode graph: " + t.graph().Describe();
  return out;
}

int RunTopo(const TopoArgs& args) {
  if (args.list_profiles) {
    for (const ProfileInfo& p : ListProfiles()) std::printf("%-22s %s\n", p.name.c_str(), p.description.c_str());
    return 0;
  }
  if (args.file.empty() == args.profile.empty()) {
    std::fputs("topofit topo: give exactly one of FILE (or - for stdin) and --profile NAME\n", stderr);
    return 2;
  }
  std::string source;
  Result<TopoMatrix> matrix = LoadMatrix(args, &source);
  if (!matrix) {
    std::fprintf(stderr, "topofit topo: %s\n", matrix.error().c_str());
    return 2;
  }
  auto topology = Topology::Build(std::move(matrix).value());
  if (!topology) {
    std::fprintf(stderr, "topofit topo: %s: %s\n", source.c_str(), topology.error().c_str());
    return 2;
  }
  for (const std::string& w : (*topology)->warnings())
    Log(LogLevel::kWarn, "topology warning", {{"source", source}, {"detail", w}});
  if (args.json) {
    std::printf("%s\n", ToJson(**topology, source).dump(2).c_str());
  } else {
    std::fputs(Summary(**topology, source).c_str(), stdout);
  }
  return 0;
}

}  // namespace

CommandRun SetupTopo(CLI::App& sub) {
  auto args = std::make_shared<TopoArgs>();
  sub.add_option("file", args->file, "`nvidia-smi topo -m` output to read, or - for stdin");
  sub.add_option("--profile,-p", args->profile, "Use a built-in profile instead (see --list-profiles)");
  sub.add_flag("--json", args->json, "Print one JSON object instead of the summary");
  sub.add_flag("--list-profiles", args->list_profiles, "Name the built-in profiles and exit");
  return CommandRun([args]() { return RunTopo(*args); });
}

}  // namespace topofit::cli
