// NodeGraph: see node_graph.h for the contract.

#include "topology/node_graph.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <set>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <fmt/format.h>

namespace topofit {

namespace {

// NVSwitch boards show every GPU pair as NV with one count (A100 NV12, A800 and H800 NV8; H100, H200,
// B200 and GB200 NV18). When that count times the GPU's peers is more links than any GPU has (18 on
// H100, H200 and B200), the pairs cannot be direct, so they go through a switch. All-to-all boards of
// direct links stay within it (HGX A100 4-GPU NV4 x 3 = 12, HGX H100 4-GPU NV6 x 3 = 18), and two GPUs
// are never a switch (an NV12 or NV18 pair is a bridge, or the two visible GPUs of a bigger board).
constexpr int kMaxNvLinksPerGpu = 18;
constexpr int kNvSwitchMinGpus = 3;

// The fabric vertex of each PCIe level of pcie_groups.h, finest first.
constexpr VertexKind kLevelKind[kPcieLevels] = {VertexKind::kPcieSwitch, VertexKind::kPcieBridge,
                                                VertexKind::kHostBridge, VertexKind::kNumaNode};

struct KeepSourceAndFabric {
  const NodeGraph::Graph* g = nullptr;
  NodeGraph::Vertex source = 0;
  bool operator()(NodeGraph::Vertex v) const {
    VertexKind k = (*g)[v].kind;
    return v == source || (k != VertexKind::kGpu && k != VertexKind::kNic);
  }
};

// The warning for a matrix that is not one PCIe tree, or nullopt when it is one. Says whether the
// NUMA Affinity of NVLink GPUs is what put the pair closer than the matrix does.
std::optional<std::string> NotOneTreeWarning(const TopoMatrix& m, const PcieGroups& groups) {
  std::optional<TreeConflict> c = FindTreeConflict(m, groups);
  if (!c) return std::nullopt;
  const bool by_affinity = !FindTreeConflict(m, GroupDevices(m, /*numa_by_affinity=*/false));
  return fmt::format(
      "the matrix is not one PCIe tree: it says {} and {} are {}, but its other entries{} put them at {}{}; "
      "each device pair is modelled at the bandwidth of the class the matrix gives it",
      DeviceName(m, c->a), DeviceName(m, c->b), ToString(c->said),
      by_affinity ? " and the NUMA Affinity of its NVLink GPUs" : "", ToString(c->derived),
      c->pairs > 1 ? fmt::format(" ({} pairs disagree so)", c->pairs) : "");
}

}  // namespace

std::string_view ToString(VertexKind kind) {
  switch (kind) {
    case VertexKind::kGpu: return "GPU";
    case VertexKind::kNic: return "NIC";
    case VertexKind::kNvSwitch: return "NVSwitch";
    case VertexKind::kPcieSwitch: return "PCIe switch";
    case VertexKind::kPcieBridge: return "PCIe bridges";
    case VertexKind::kHostBridge: return "host bridge";
    case VertexKind::kNumaNode: return "NUMA node";
  }
  return "?";
}

std::string_view ToString(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kNvLink: return "NVLink";
    case EdgeKind::kPcie: return "PCIe";
    case EdgeKind::kSmp: return "SMP";
  }
  return "?";
}

int NodeGraph::InferPcieGen(const TopoMatrix& m) {
  int max_nv = 0;
  for (const auto& row : m.gpu_links) {
    for (Link l : row) {
      if (l.cls == LinkClass::Nv) max_nv = std::max<int>(max_nv, l.nvlinks);
    }
  }
  if (max_nv >= 18) return 5;
  if (max_nv >= 4) return 4;
  return 3;
}

Result<NodeGraph> NodeGraph::Build(const TopoMatrix& m, const NodeGraphOptions& options) {
  NodeGraph ng;
  ng.gpus_ = m.gpu_count();
  ng.nics_ = m.nic_count();
  ng.model_ = BandwidthModel::For(options.pcie_gen.value_or(InferPcieGen(m)), options.nvlink_per_link_gbps);
  ng.AddDevices(m);
  PcieGroups groups = GroupDevices(m);
  if (std::optional<std::string> warning = NotOneTreeWarning(m, groups)) {
    ng.warnings_.push_back(*std::move(warning));
    ng.AddPcieAsGiven(m);
  } else {
    ng.AddPcieTree(m, groups);
  }
  ng.AddNvLinks(m);
  for (int x = 0; x < ng.gpus_; ++x) ng.numa_.push_back(PerGpu(m.numa_affinity, x));
  ng.ComputeBandwidths();
  ng.ComputeNearestNics(m);
  return ng;
}

void NodeGraph::AddDevices(const TopoMatrix& m) {
  for (int x = 0; x < gpus_ + nics_; ++x) {
    bool gpu = x < gpus_;
    boost::add_vertex(VertexInfo{gpu ? VertexKind::kGpu : VertexKind::kNic, DeviceName(m, x), gpu ? x : x - gpus_, {}},
                      graph_);
  }
}

// One PCIe edge per device pair that is not NVLink, at its class's bandwidth: with no fabric vertex and
// no device as a hop, the widest path of each pair is its own edge.
void NodeGraph::AddPcieAsGiven(const TopoMatrix& m) {
  const int d = gpus_ + nics_;
  for (int a = 0; a < d; ++a) {
    for (int b = a + 1; b < d; ++b) {
      Link l = DeviceLink(m, a, b);
      if (l.cls == LinkClass::Nv) continue;
      boost::add_edge(static_cast<Vertex>(a), static_cast<Vertex>(b), EdgeInfo{EdgeKind::kPcie, model_.ForLink(l.cls, 0), 0},
                      graph_);
    }
  }
}

void NodeGraph::AddPcieTree(const TopoMatrix& m, const PcieGroups& groups) {
  const std::vector<std::vector<int>>& root = groups.root;
  const int d = gpus_ + nics_;
  // One fabric vertex per group that joins at least two distinct groups of the level below (for
  // PCIe switches: two devices); NUMA nodes always get one, every device hangs off a socket.
  std::vector<std::map<int, Vertex>> vertex_at(kPcieLevels);
  for (int x = 0; x < d; ++x) {
    const int group = root[kNumaLevel][x];
    if (vertex_at[kNumaLevel].count(group)) continue;
    std::optional<int> label = NumaLabel(m, groups, group);
    std::string name = label ? fmt::format("numa{}", *label) : fmt::format("numa-x{}", vertex_at[kNumaLevel].size());
    vertex_at[kNumaLevel][group] = boost::add_vertex(VertexInfo{VertexKind::kNumaNode, name, -1, label}, graph_);
  }
  for (int lv = kNumaLevel - 1; lv >= 0; --lv) {
    std::map<int, std::set<int>> children;
    for (int x = 0; x < d; ++x) children[root[lv][x]].insert(lv == 0 ? x : root[lv - 1][x]);
    for (const auto& [group, kids] : children) {
      if (kids.size() < 2) continue;
      const char* prefix = lv == 0 ? "pcie-switch" : lv == 1 ? "pcie-bridge" : "host-bridge";
      std::string name = fmt::format("{}{}", prefix, vertex_at[lv].size());
      vertex_at[lv][group] = boost::add_vertex(VertexInfo{kLevelKind[lv], name, -1, {}}, graph_);
    }
  }
  const double level_gbps[kPcieLevels] = {model_.pix, model_.pxb, model_.phb, model_.node};
  // Attach each device, then each fabric vertex, to the nearest existing group above it; the edge
  // carries the bandwidth of traffic that climbs to that group.
  auto attach = [&](Vertex v, int x, int from_level) {
    for (int lv = from_level; lv < kPcieLevels; ++lv) {
      auto it = vertex_at[lv].find(root[lv][x]);
      if (it == vertex_at[lv].end()) continue;
      boost::add_edge(v, it->second, EdgeInfo{EdgeKind::kPcie, level_gbps[lv], 0}, graph_);
      return;
    }
  };
  for (int x = 0; x < d; ++x) attach(static_cast<Vertex>(x), x, 0);
  for (int lv = 0; lv < kNumaLevel; ++lv) {
    for (const auto& [group, v] : vertex_at[lv]) attach(v, group, lv + 1);
  }
  const auto& numa = vertex_at[kNumaLevel];
  for (auto a = numa.begin(); a != numa.end(); ++a) {
    for (auto b = std::next(a); b != numa.end(); ++b) {
      boost::add_edge(a->second, b->second, EdgeInfo{EdgeKind::kSmp, model_.sys, 0}, graph_);
    }
  }
}

void NodeGraph::AddNvLinks(const TopoMatrix& m) {
  // One NVSwitch fabric when every pair has one count too high for direct links, else direct GPU-GPU edges.
  std::set<int> counts;
  bool all_nv = gpus_ >= kNvSwitchMinGpus;
  for (int a = 0; a < gpus_; ++a) {
    for (int b = a + 1; b < gpus_; ++b) {
      Link l = m.gpu_links[a][b];
      all_nv = all_nv && l.cls == LinkClass::Nv;
      if (l.cls == LinkClass::Nv) counts.insert(l.nvlinks);
    }
  }
  has_nvswitch_ = all_nv && counts.size() == 1 && *counts.begin() * (gpus_ - 1) > kMaxNvLinksPerGpu;
  if (has_nvswitch_) {
    const int links = *counts.begin();
    Vertex sw = boost::add_vertex(VertexInfo{VertexKind::kNvSwitch, "nvswitch", -1, {}}, graph_);
    for (int a = 0; a < gpus_; ++a) {
      boost::add_edge(gpu_vertex(a), sw, EdgeInfo{EdgeKind::kNvLink, links * model_.nvlink_per_link, links}, graph_);
    }
    return;
  }
  for (int a = 0; a < gpus_; ++a) {
    for (int b = a + 1; b < gpus_; ++b) {
      Link l = m.gpu_links[a][b];
      if (l.cls != LinkClass::Nv) continue;
      boost::add_edge(gpu_vertex(a), gpu_vertex(b), EdgeInfo{EdgeKind::kNvLink, l.nvlinks * model_.nvlink_per_link, l.nvlinks},
                      graph_);
    }
  }
}

void NodeGraph::ComputeBandwidths() {
  const int d = gpus_ + nics_;
  bw_.assign(static_cast<size_t>(d) * d, 0.0);
  auto weight = boost::get(&EdgeInfo::gbps, graph_);
  auto index = boost::get(boost::vertex_index, graph_);
  std::vector<double> widest(boost::num_vertices(graph_));
  for (int s = 0; s < d; ++s) {
    // Widest paths from s through fabric only: other devices are filtered out so none is a hop.
    std::fill(widest.begin(), widest.end(), 0.0);
    const Vertex source = static_cast<Vertex>(s);
    boost::filtered_graph<Graph, boost::keep_all, KeepSourceAndFabric> fabric(
        graph_, boost::keep_all(), KeepSourceAndFabric{&graph_, source});
    boost::dijkstra_shortest_paths(
        fabric, source,
        boost::weight_map(weight)
            .distance_map(boost::make_iterator_property_map(widest.begin(), index))
            .distance_compare(std::greater<double>())
            .distance_combine([](double a, double b) { return std::min(a, b); })
            .distance_inf(0.0)
            .distance_zero(std::numeric_limits<double>::infinity()));
    for (int t = 0; t < d; ++t) {
      if (t == s) continue;
      double best = 0;
      for (auto [e, end] = boost::out_edges(static_cast<Vertex>(t), graph_); e != end; ++e) {
        Vertex u = boost::target(*e, graph_);
        if (u == source) best = std::max(best, graph_[*e].gbps);
        else if (KeepSourceAndFabric{&graph_, source}(u)) best = std::max(best, std::min(graph_[*e].gbps, widest[u]));
      }
      bw_[Index(s, t)] = best;
    }
  }
}

void NodeGraph::ComputeNearestNics(const TopoMatrix& m) {
  nearest_.assign(gpus_, {});
  for (int gpu = 0; gpu < gpus_; ++gpu) {
    if (nics_ == 0) continue;
    Link best = m.gpu_nic[gpu][0];
    for (int n = 1; n < nics_; ++n) best = std::max(best, m.gpu_nic[gpu][n]);
    std::vector<int>& out = nearest_[gpu];
    for (int n = 0; n < nics_; ++n) {
      if (m.gpu_nic[gpu][n] == best) out.push_back(n);
    }
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
      return gpu_nic_bandwidth_gbps(gpu, a) > gpu_nic_bandwidth_gbps(gpu, b);
    });
  }
}

size_t NodeGraph::CountVertices(VertexKind kind) const {
  size_t n = 0;
  for (auto [v, end] = boost::vertices(graph_); v != end; ++v) n += graph_[*v].kind == kind;
  return n;
}

std::string NodeGraph::Describe() const {
  std::string out = fmt::format("PCIe gen{} model, NVLink {:.0f} GB/s per link{}{}\n", model_.pcie_gen,
                                model_.nvlink_per_link, has_nvswitch_ ? ", NVSwitch fabric" : "",
                                pcie_as_given() ? ", PCIe as given pair by pair (not one PCIe tree)" : "");
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    const VertexInfo& a = graph_[boost::source(*e, graph_)];
    const VertexInfo& b = graph_[boost::target(*e, graph_)];
    const EdgeInfo& info = graph_[*e];
    std::string links = info.kind == EdgeKind::kNvLink ? fmt::format(" x{}", info.nvlinks) : "";
    out += fmt::format("  {} ({}) -- {} ({}): {}{} {:.1f} GB/s\n", a.name, ToString(a.kind), b.name,
                       ToString(b.kind), ToString(info.kind), links, info.gbps);
  }
  return out;
}

}  // namespace topofit
