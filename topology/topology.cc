// Topology and TopologyRegistry. See topology.h for the contract.

#include "topology/topology.h"

#include <cmath>

#include <fmt/format.h>

#include "topology/node_graph.h"

namespace topofit {

namespace {

Status CheckSquare(const std::vector<std::vector<Link>>& links, size_t n, std::string_view what) {
  if (links.size() != n) return Error{fmt::format("{} has {} rows, expected {}", what, links.size(), n)};
  for (size_t a = 0; a < n; ++a) {
    if (links[a].size() != n) return Error{fmt::format("{} row {} has {} entries, expected {}", what, a, links[a].size(), n)};
    for (size_t b = 0; b < n; ++b) {
      if ((a == b) != (links[a][b].cls == LinkClass::Self)) {
        return Error{fmt::format("{}: 'X' must be exactly the diagonal, got '{}' at [{}][{}]", what, ToString(links[a][b]), a, b)};
      }
      if (b < a && !(links[a][b] == links[b][a])) return Error{fmt::format("{} is not symmetric at [{}][{}]", what, a, b)};
    }
  }
  return Status::Ok();
}

// A TopoMatrix may come from code rather than the parser, so its invariants are checked again here.
Status Validate(const TopoMatrix& m) {
  const size_t g = m.gpu_names.size(), n = m.nic_names.size();
  if (g == 0) return Error{"a topology needs at least one GPU"};
  if (g > static_cast<size_t>(GpuSet::kMaxGpus)) {
    return Error{fmt::format("a node may have at most {} GPUs, got {}", GpuSet::kMaxGpus, g)};
  }
  if (Status s = CheckSquare(m.gpu_links, g, "the GPU matrix"); !s) return s;
  if (Status s = CheckSquare(m.nic_links, n, "the NIC matrix"); !s) return s;
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a != b && m.nic_links[a][b].cls == LinkClass::Nv) return Error{"NVLink between NICs is not a real link"};
    }
  }
  if (m.gpu_nic.size() != g) return Error{fmt::format("the GPU-NIC matrix has {} rows, expected {}", m.gpu_nic.size(), g)};
  for (const auto& row : m.gpu_nic) {
    if (row.size() != n) return Error{fmt::format("a GPU-NIC row has {} entries, expected {}", row.size(), n)};
    for (Link l : row) {
      if (l.cls == LinkClass::Nv || l.cls == LinkClass::Self) {
        return Error{fmt::format("'{}' between a GPU and a NIC is not a PCIe link class", ToString(l))};
      }
    }
  }
  auto per_gpu = [&](size_t size, std::string_view what) -> Status {
    if (size == 0 || size == g) return Status::Ok();
    return Error{fmt::format("{} has {} entries, expected {} (one per GPU) or none", what, size, g)};
  };
  if (Status s = per_gpu(m.cpu_affinity.size(), "CPU Affinity"); !s) return s;
  if (Status s = per_gpu(m.numa_affinity.size(), "NUMA Affinity"); !s) return s;
  return per_gpu(m.gpu_numa_id.size(), "GPU NUMA ID");
}

std::string Optional(const std::vector<std::optional<int>>& v, size_t i) {
  return i < v.size() && v[i] ? std::to_string(*v[i]) : "-";
}

// Everything the model reads from the matrix, in one canonical text. The bandwidths follow from it.
std::string Fingerprint(const TopoMatrix& m) {
  std::string out = fmt::format("topofit-topology/1 gpus={} nics={}\n", m.gpu_count(), m.nic_count());
  for (int a = 0; a < m.gpu_count(); ++a) {
    out += "g";
    for (Link l : m.gpu_links[a]) out += " " + ToString(l);
    out += " |";
    for (Link l : m.gpu_nic[a]) out += " " + ToString(l);
    out += fmt::format(" | numa={} cpu={}\n", Optional(m.numa_affinity, a),
                       a < static_cast<int>(m.cpu_affinity.size()) ? m.cpu_affinity[a] : "");
  }
  for (int a = 0; a < m.nic_count(); ++a) {
    out += "n " + m.nic_names[a];
    for (Link l : m.nic_links[a]) out += " " + ToString(l);
    out += "\n";
  }
  return out;
}

}  // namespace

struct Topology::Impl {
  TopoMatrix matrix;
  NodeGraph graph;
  PairMatrix pairs;
  std::unique_ptr<SetSelector> selector;
  std::string fingerprint;
};

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::~Topology() = default;

Result<std::shared_ptr<const Topology>> Topology::Build(TopoMatrix matrix) {
  if (Status s = Validate(matrix); !s) return Error{s.error()};
  Result<NodeGraph> graph = NodeGraph::Build(matrix);
  if (!graph) return Error{graph.error()};
  std::shared_ptr<Topology> t(new Topology());
  Impl& impl = *t->impl_;
  impl.fingerprint = Fingerprint(matrix);
  impl.graph = std::move(graph).value();
  const int n = matrix.gpu_count();
  impl.pairs = PairMatrix(n);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      double gbps = impl.graph.gpu_bandwidth_gbps(a, b);
      impl.pairs.Set(a, b, matrix.gpu_links[a][b], static_cast<uint32_t>(std::lround(gbps * 1000.0)));
    }
  }
  impl.selector = std::make_unique<SetSelector>(impl.pairs);
  impl.matrix = std::move(matrix);
  return std::shared_ptr<const Topology>(std::move(t));
}

int Topology::gpu_count() const { return impl_->matrix.gpu_count(); }
int Topology::nic_count() const { return impl_->matrix.nic_count(); }
const TopoMatrix& Topology::matrix() const { return impl_->matrix; }
const NodeGraph& Topology::graph() const { return impl_->graph; }
const PairMatrix& Topology::pairs() const { return impl_->pairs; }
const SetSelector& Topology::selector() const { return *impl_->selector; }
Link Topology::link(int a, int b) const { return impl_->pairs.link(a, b); }
double Topology::bandwidth_gbps(int a, int b) const { return impl_->pairs.bw(a, b) / 1000.0; }
std::optional<int> Topology::numa_node(int gpu) const { return impl_->graph.numa_node(gpu); }
std::vector<int> Topology::nearest_nics(int gpu) const { return impl_->graph.nearest_nics(gpu); }
const std::string& Topology::fingerprint() const { return impl_->fingerprint; }
const std::vector<std::string>& Topology::warnings() const { return impl_->graph.warnings(); }

Result<std::shared_ptr<const Topology>> TopologyRegistry::Intern(TopoMatrix matrix) {
  if (Status s = Validate(matrix); !s) return Error{s.error()};
  std::string key = Fingerprint(matrix);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_fingerprint_.find(key);
    if (it != by_fingerprint_.end()) return it->second;
  }
  // Built outside the lock: building is the slow part and must not stall other lookups. If another
  // thread interned the same topology meanwhile, its instance wins and ours is dropped.
  Result<std::shared_ptr<const Topology>> built = Topology::Build(std::move(matrix));
  if (!built) return built;
  std::lock_guard<std::mutex> lock(mu_);
  return by_fingerprint_.emplace(std::move(key), *built).first->second;
}

size_t TopologyRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_fingerprint_.size();
}

}  // namespace topofit
