#include "topology/node_graph.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <fmt/format.h>

namespace topofit {

namespace {

// PCIe x16 raw bandwidth per direction in GB/s: 16 lanes x transfer rate x 128b/130b / 8 bits
// (PCI-SIG base specifications: gen3 8 GT/s, gen4 16 GT/s, gen5 32 GT/s).
constexpr double kPcieX16RawGbps[] = {15.75, 31.5, 63.0};  // gen3, gen4, gen5

// Effective peer-to-peer share of the raw rate, by how far up the tree the traffic climbs. Calibrated
// on gen3: behind one switch, P2P copies reach about 12-13 GB/s (the fixtures README quotes 10-16
// GB/s effective for gen3 x16), ~80% of raw after TLP/DLLP overhead. Each extra bridge costs a
// little; forwarding through the CPU root complex (PHB) costs more; crossing between host bridges of
// one socket (NODE) more again; crossing the SMP interconnect (SYS: QPI/UPI/Infinity Fabric) is much
// slower, which is why NCCL stages cross-socket traffic through host memory. The exact figures are a
// model choice; the strict order PIX > PXB > PHB > NODE > SYS is the contract placement relies on.
constexpr double kPixShare = 0.80;   // gen3 12.6, gen4 25.2, gen5 50.4 GB/s
constexpr double kPxbShare = 0.75;   // gen3 11.8, gen4 23.6, gen5 47.3 GB/s
constexpr double kPhbShare = 0.65;   // gen3 10.2, gen4 20.5, gen5 41.0 GB/s
constexpr double kNodeShare = 0.50;  // gen3  7.9, gen4 15.8, gen5 31.5 GB/s
constexpr double kSysShare = 0.25;   // gen3  3.9, gen4  7.9, gen5 15.8 GB/s

// NVSwitch boards show every GPU pair as NV with one count of at least 12 (A100 NV12; H100, H200 and
// B200 NV18). With 3 or more GPUs that is more links per pair than a GPU has in all (A100: 12), so
// they must go to a switch; two GPUs at NV12 are a direct bridge (A100 PCIe cards), not a switch.
constexpr int kNvSwitchMinLinks = 12;
constexpr int kNvSwitchMinGpus = 3;

// The PCIe levels, finest first, each with the weakest class that puts two devices in one group.
constexpr LinkClass kLevelClass[] = {LinkClass::Pix, LinkClass::Pxb, LinkClass::Phb, LinkClass::Node};
constexpr VertexKind kLevelKind[] = {VertexKind::kPcieSwitch, VertexKind::kPcieBridge, VertexKind::kHostBridge,
                                     VertexKind::kNumaNode};
constexpr int kLevels = 4;
constexpr int kNumaLevel = 3;

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) { return parent_[x] == x ? x : parent_[x] = Find(parent_[x]); }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

// Link between devices a and b of the matrix, devices numbered GPUs first, then NICs.
Link DeviceLink(const TopoMatrix& m, int a, int b) {
  const int g = m.gpu_count();
  if (a < g && b < g) return m.gpu_links[a][b];
  if (a < g) return m.gpu_nic[a][b - g];
  if (b < g) return m.gpu_nic[b][a - g];
  return m.nic_links[a - g][b - g];
}

std::string DeviceName(const TopoMatrix& m, int d) {
  return d < m.gpu_count() ? m.gpu_names[d] : m.nic_names[d - m.gpu_count()];
}

template <typename T>
T At(const std::vector<T>& v, int i) { return i < static_cast<int>(v.size()) ? v[i] : T{}; }

// Two GPUs joined by NVLink hide their PCIe relation; they share a NUMA node when NUMA Affinity (or,
// lacking it, the CPU Affinity list) says so.
bool SameNumaByAffinity(const TopoMatrix& m, int a, int b) {
  auto na = At(m.numa_affinity, a), nb = At(m.numa_affinity, b);
  if (na || nb) return na && nb && *na == *nb;
  std::string ca = At(m.cpu_affinity, a), cb = At(m.cpu_affinity, b);
  return !ca.empty() && ca == cb;
}

struct KeepSourceAndFabric {
  const NodeGraph::Graph* g = nullptr;
  NodeGraph::Vertex source = 0;
  bool operator()(NodeGraph::Vertex v) const {
    VertexKind k = (*g)[v].kind;
    return v == source || (k != VertexKind::kGpu && k != VertexKind::kNic);
  }
};

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

BandwidthModel BandwidthModel::For(int pcie_gen, double nvlink_per_link) {
  BandwidthModel b;
  b.pcie_gen = std::clamp(pcie_gen, 3, 5);
  b.nvlink_per_link = nvlink_per_link;
  const double raw = kPcieX16RawGbps[b.pcie_gen - 3];
  b.pix = raw * kPixShare;
  b.pxb = raw * kPxbShare;
  b.phb = raw * kPhbShare;
  b.node = raw * kNodeShare;
  b.sys = raw * kSysShare;
  return b;
}

double BandwidthModel::ForLink(LinkClass cls, int nvlinks) const {
  switch (cls) {
    case LinkClass::Nv: return nvlinks * nvlink_per_link;
    case LinkClass::Pix: return pix;
    case LinkClass::Pxb: return pxb;
    case LinkClass::Phb: return phb;
    case LinkClass::Node: return node;
    case LinkClass::Sys: return sys;
    case LinkClass::Self: return 0;
  }
  return 0;
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

namespace {

// Group ids per PCIe level: roots[level][device] (devices numbered GPUs first, then NICs). Pairs
// joined by NVLink say nothing about PCIe and are skipped, except that GPUs sharing NUMA Affinity are
// put in one NUMA node.
using LevelRoots = std::vector<std::vector<int>>;

LevelRoots GroupDevices(const TopoMatrix& m) {
  const int d = m.gpu_count() + m.nic_count();
  std::vector<UnionFind> uf(kLevels, UnionFind(d));
  for (int a = 0; a < d; ++a) {
    for (int b = a + 1; b < d; ++b) {
      Link l = DeviceLink(m, a, b);
      for (int lv = 0; lv < kLevels; ++lv) {
        if (l.cls != LinkClass::Nv && l.cls >= kLevelClass[lv]) uf[lv].Union(a, b);
      }
      if (l.cls == LinkClass::Nv && SameNumaByAffinity(m, a, b)) uf[kNumaLevel].Union(a, b);
    }
  }
  LevelRoots root(kLevels, std::vector<int>(d));
  for (int lv = 0; lv < kLevels; ++lv) {
    for (int x = 0; x < d; ++x) root[lv][x] = uf[lv].Find(x);
  }
  return root;
}

// The groups must reproduce every PCIe class of the matrix, or it is not one PCIe tree.
Status CheckOneTree(const TopoMatrix& m, const LevelRoots& root) {
  const int d = m.gpu_count() + m.nic_count();
  for (int a = 0; a < d; ++a) {
    for (int b = a + 1; b < d; ++b) {
      Link l = DeviceLink(m, a, b);
      if (l.cls == LinkClass::Nv) continue;
      LinkClass derived = LinkClass::Sys;
      for (int lv = kLevels - 1; lv >= 0; --lv) {
        if (root[lv][a] == root[lv][b]) derived = kLevelClass[lv];
      }
      if (derived != l.cls) {
        return Error{fmt::format(
            "the matrix is not one PCIe tree: it says {} and {} are {}, but its other entries put them at {}",
            DeviceName(m, a), DeviceName(m, b), ToString(l.cls), ToString(derived))};
      }
    }
  }
  return Status::Ok();
}

// The NUMA node number shared by the GPUs of one NUMA group, nullopt if none is known or they differ.
std::optional<int> NumaLabel(const TopoMatrix& m, const LevelRoots& root, int group) {
  std::optional<int> label;
  for (int y = 0; y < m.gpu_count(); ++y) {
    if (root[kNumaLevel][y] != group) continue;
    std::optional<int> n = At(m.numa_affinity, y);
    if (n && label && *n != *label) return std::nullopt;
    if (n) label = n;
  }
  return label;
}

}  // namespace

Result<NodeGraph> NodeGraph::Build(const TopoMatrix& m, const NodeGraphOptions& options) {
  NodeGraph ng;
  ng.gpus_ = m.gpu_count();
  ng.nics_ = m.nic_count();
  ng.model_ = BandwidthModel::For(options.pcie_gen.value_or(InferPcieGen(m)), options.nvlink_per_link_gbps);
  LevelRoots root = GroupDevices(m);
  if (Status s = CheckOneTree(m, root); !s) return Error{s.error()};
  for (int x = 0; x < ng.gpus_ + ng.nics_; ++x) {
    bool gpu = x < ng.gpus_;
    boost::add_vertex(VertexInfo{gpu ? VertexKind::kGpu : VertexKind::kNic, DeviceName(m, x), gpu ? x : x - ng.gpus_, {}},
                      ng.graph_);
  }
  ng.AddPcieTree(m, root);
  ng.AddNvLinks(m);
  for (int x = 0; x < ng.gpus_; ++x) ng.numa_.push_back(At(m.numa_affinity, x));
  ng.ComputeBandwidths();
  ng.ComputeNearestNics(m);
  return ng;
}

void NodeGraph::AddPcieTree(const TopoMatrix& m, const std::vector<std::vector<int>>& root) {
  const int d = gpus_ + nics_;
  // One fabric vertex per group that joins at least two distinct groups of the level below (for
  // PCIe switches: two devices); NUMA nodes always get one, every device hangs off a socket.
  std::vector<std::map<int, Vertex>> vertex_at(kLevels);
  for (int x = 0; x < d; ++x) {
    const int group = root[kNumaLevel][x];
    if (vertex_at[kNumaLevel].count(group)) continue;
    std::optional<int> label = NumaLabel(m, root, group);
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
  const double level_gbps[kLevels] = {model_.pix, model_.pxb, model_.phb, model_.node};
  // Attach each device, then each fabric vertex, to the nearest existing group above it; the edge
  // carries the bandwidth of traffic that climbs to that group.
  auto attach = [&](Vertex v, int x, int from_level) {
    for (int lv = from_level; lv < kLevels; ++lv) {
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
  // One NVSwitch fabric when every pair has the same high count, else direct GPU-GPU edges.
  std::set<int> counts;
  bool all_nv = gpus_ >= kNvSwitchMinGpus;
  for (int a = 0; a < gpus_; ++a) {
    for (int b = a + 1; b < gpus_; ++b) {
      Link l = m.gpu_links[a][b];
      all_nv = all_nv && l.cls == LinkClass::Nv;
      if (l.cls == LinkClass::Nv) counts.insert(l.nvlinks);
    }
  }
  has_nvswitch_ = all_nv && counts.size() == 1 && *counts.begin() >= kNvSwitchMinLinks;
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
  std::string out = fmt::format("PCIe gen{} model, NVLink {:.0f} GB/s per link{}\n", model_.pcie_gen,
                                model_.nvlink_per_link, has_nvswitch_ ? ", NVSwitch fabric" : "");
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
