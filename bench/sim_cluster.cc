#include "bench/sim_cluster.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "base/files.h"
#include "bench/openb_csv.h"
#include "bench/shared_node_types.h"

namespace topofit::bench {

namespace {

// What a node of topology `spec` carries in its topofit.io/gpu-topology annotation.
Result<std::string> AnnotationFor(const std::string& spec) {
  bool is_file = spec.find('/') != std::string::npos || spec.ends_with(".txt");
  if (!is_file) return spec;
  return ReadFile(spec);
}

// The type of node `n`, its GPUs' topology named by `spec`.
Result<NodeType> MakeType(const NodeSpec& n, const std::string& spec, TopologyRegistry& registry) {
  auto annotation = AnnotationFor(spec);
  if (!annotation) return Error{annotation.error()};
  NodeType t;
  if (!n.labels.empty()) {
    auto shared = ResolveSharedNodeType(n, *annotation, registry);
    if (!shared) return Error{shared.error()};
    t = std::move(shared).value();
  } else {
    auto topo = ResolveTopology(spec, n.gpus, registry);
    if (!topo) return Error{"node " + n.name + " (" + n.model + " x" + std::to_string(n.gpus) + "): " + topo.error()};
    t.model = n.model;
    t.gpus = n.gpus;
    t.topology = *topo;
    t.annotation = *annotation;
  }
  t.topology_spec = spec;
  return t;
}

// A node type's key: its model, topology, sharing labels and device count.
std::string TypeKey(const NodeSpec& n, const std::string& spec) {
  std::string key = n.model + "\n" + spec + "\n" + std::to_string(n.gpus);
  for (const auto& [k, v] : n.labels) key += "\n" + k + "=" + v;
  return key;
}

}  // namespace

Result<std::unique_ptr<SimCluster>> SimCluster::Build(std::vector<NodeSpec> nodes, const GpuModelMap& map) {
  TopologyRegistry registry;
  std::vector<NodeType> types;
  std::vector<int> type_of(nodes.size(), -1);
  std::map<std::string, int> by_key;  // TypeKey -> type
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeSpec& n = nodes[i];
    if (n.gpus <= 0) continue;
    std::string spec = n.profile;
    if (spec.empty()) {
      auto s = map.TopologyFor(n.model, n.gpus);
      if (!s) return Error{"node " + n.name + ": " + s.error()};
      spec = *s;
    }
    auto key = TypeKey(n, spec);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      auto t = MakeType(n, spec, registry);
      if (!t) return Error{t.error()};
      t->id = int(types.size());
      types.push_back(std::move(t).value());
      it = by_key.emplace(key, int(types.size()) - 1).first;
    }
    type_of[i] = it->second;
  }
  return Build(std::move(nodes), std::move(types), std::move(type_of));
}

Result<std::unique_ptr<SimCluster>> SimCluster::Build(std::vector<NodeSpec> nodes, std::vector<NodeType> types,
                                                      std::vector<int> type_of_node) {
  if (type_of_node.size() != nodes.size()) return Error{"type_of_node must have one entry per node"};
  std::unique_ptr<SimCluster> c(new SimCluster());
  c->specs_ = std::move(nodes);
  c->types_ = std::move(types);
  for (NodeType& t : c->types_)
    if (!t.physical) t.physical = t.topology;
  c->nodes_.resize(c->specs_.size());
  for (size_t i = 0; i < c->specs_.size(); ++i) {
    const NodeSpec& s = c->specs_[i];
    SimNode& n = c->nodes_[i];
    n.spec = &s;
    n.type = type_of_node[i];
    if (s.gpus > 0) {
      if (n.type < 0 || n.type >= int(c->types_.size())) return Error{"node " + s.name + " has GPUs but no type"};
      const NodeType& t = c->types_[n.type];
      if (!t.topology || t.topology->gpu_count() != s.gpus) {
        return Error{"node " + s.name + ": its type's topology does not have " + std::to_string(s.gpus) + " GPUs"};
      }
      if (s.gpus > GpuSet::kMaxGpus) return Error{"node " + s.name + ": more than 64 GPUs"};
      auto m = std::find(c->models_.begin(), c->models_.end(), s.model);
      if (m == c->models_.end()) {
        if (c->models_.size() == 64) return Error{"more than 64 distinct GPU models"};
        c->models_.push_back(s.model);
        m = c->models_.end() - 1;
      }
      n.model_id = int(m - c->models_.begin());
      n.all = GpuSet::FirstN(s.gpus);
      c->gpu_capacity_ += s.gpus;
    }
  }
  c->Reset();
  return c;
}

std::unique_ptr<SimCluster> SimCluster::Clone() const {
  std::unique_ptr<SimCluster> c(new SimCluster(*this));
  for (size_t i = 0; i < c->nodes_.size(); ++i) c->nodes_[i].spec = &c->specs_[i];
  c->Reset();
  return c;
}

bool SimCluster::any_dra() const {
  return std::any_of(nodes_.begin(), nodes_.end(), [](const SimNode& n) { return n.dra; });
}

void SimCluster::Reset() {
  for (auto& n : nodes_) {
    n.free_cpu = n.spec->cpu_milli;
    n.free_mem = n.spec->memory_mib;
    n.free = n.all;
  }
  gpus_allocated_ = 0;
  next_start_node_ = 0;
}

void SimCluster::NodesFound(const std::vector<int>& feasible, std::vector<int>* out) {
  out->clear();
  const int n = int(nodes_.size());
  if (n == 0) return;
  int percent = percentage_of_nodes_to_score_;
  int to_find = n;
  if (n >= 100 && percent < 100) {
    if (percent <= 0) percent = std::max(5, 50 - n / 125);
    to_find = std::max(100, n * percent / 100);
  }
  // feasible is ascending: the search from next_start_node_ meets those at or past it first.
  auto first = std::lower_bound(feasible.begin(), feasible.end(), next_start_node_);
  const size_t total = feasible.size();
  const size_t found = std::min<size_t>(total, size_t(to_find));
  size_t at = size_t(first - feasible.begin());
  for (size_t k = 0; k < found; ++k) out->push_back(feasible[(at + k) % total]);
  // Examined: every node up to and including the last one found (all nodes when fewer were found).
  int examined = n;
  if (found == size_t(to_find) && found > 0) {
    const int last = out->back();
    examined = (last - next_start_node_ + n) % n + 1;
  }
  next_start_node_ = (next_start_node_ + examined) % n;
}

uint64_t SimCluster::AllowedModels(const PodSpec& pod) const {
  if (pod.gpu_models.empty()) return ~uint64_t{0};
  uint64_t mask = 0;
  for (const auto& m : pod.gpu_models) {
    auto it = std::find(models_.begin(), models_.end(), m);
    if (it != models_.end()) mask |= uint64_t{1} << (it - models_.begin());
  }
  return mask;
}

bool SimCluster::Fits(const PodSpec& pod, uint64_t allowed_models, int i) const {
  const SimNode& n = nodes_[i];
  if (n.free_cpu < pod.cpu_milli || n.free_mem < pod.memory_mib) return false;
  if (pod.gpus > 0) {
    if (n.free_gpus() < pod.gpus) return false;
    if (n.model_id < 0 || !((allowed_models >> n.model_id) & 1)) return false;
  }
  return true;
}

void SimCluster::Feasible(const PodSpec& pod, std::vector<int>* out) const {
  out->clear();
  uint64_t allowed = AllowedModels(pod);
  for (int i = 0; i < int(nodes_.size()); ++i) {
    if (Fits(pod, allowed, i)) out->push_back(i);
  }
}

void SimCluster::Bind(int i, const PodSpec& pod, GpuSet gpus) {
  SimNode& n = nodes_[i];
  assert(gpus.IsSubsetOf(n.free) && gpus.size() == pod.gpus);
  n.free_cpu -= pod.cpu_milli;
  n.free_mem -= pod.memory_mib;
  n.free = n.free - gpus;
  gpus_allocated_ += gpus.size();
}

void SimCluster::Release(int i, const PodSpec& pod, GpuSet gpus) {
  SimNode& n = nodes_[i];
  assert(!gpus.Intersects(n.free));
  n.free_cpu += pod.cpu_milli;
  n.free_mem += pod.memory_mib;
  n.free = n.free | gpus;
  gpus_allocated_ -= gpus.size();
}

}  // namespace topofit::bench
