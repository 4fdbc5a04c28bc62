// ClusterModel's read-only views (model_views.h): what the query endpoints and /metrics show.
#include <algorithm>

#include <fmt/format.h>

#include "extender/cluster/cluster_model.h"

namespace topofit::cluster {

namespace {

PodGpuInfo ToInfo(const Holding& h, const std::string& node) {
  PodGpuInfo p;
  p.uid = h.uid;
  p.pod = h.pod;
  p.node = node;
  p.gpus = h.gpus;
  p.count = h.count;
  p.kind = h.kind;
  p.unknown_identity = h.unknown_identity;
  p.conflict = h.conflict;
  p.priority = h.priority;
  p.state = h.state;
  p.terminating = h.terminating;
  p.observed = !h.observed.empty();
  p.containers = h.containers;
  return p;
}

}  // namespace

FreeShapes ClusterModel::ShapesOf(const NodeState& node) const {
  const ResolvedTopology& spec = node.spec();
  // On a shared node: sets of whole free GPUs on the physical topology; replicas are not GPUs.
  if (spec.shared.shared()) return shapes_.Count(spec.physical, spec.shared.WholeFree(spec.usable, node.free()));
  return shapes_.Count(spec.topology, node.free());
}

NodeInfo ClusterModel::InfoOf(const NodeState& node) const {
  NodeInfo info;
  const ResolvedTopology& spec = node.spec();
  info.name = node.name();
  info.topology = spec.topology;
  info.source = spec.source;
  info.profile = spec.profile;
  info.gpu_count = spec.topology ? spec.topology->gpu_count() : 0;
  info.allocatable = spec.allocatable;
  info.usable = spec.usable;
  for (const Holding& h : node.Holdings()) {
    if (h.count > 0) info.pods.push_back(ToInfo(h, node.name()));
  }
  info.free = node.free();
  info.gpus = node.GpuStates();
  info.observed = spec.observed;
  info.warnings = node.Warnings();
  if (auto labels = node_labels_.find(node.name()); labels != node_labels_.end()) info.labels = labels->second;
  info.shared = spec.shared;
  info.free_shapes = ShapesOf(node);
  return info;
}

std::optional<NodeInfo> ClusterModel::Node(std::string_view name) const {
  Reader reader = Read();
  const NodeState* node = reader.Find(name);
  if (!node) return std::nullopt;
  return InfoOf(*node);
}

std::vector<NodeInfo> ClusterModel::Nodes() const {
  std::vector<NodeInfo> out;
  {
    Reader reader = Read();
    out.reserve(reader.size());
    reader.ForEach([&](const NodeState& node) { out.push_back(InfoOf(node)); });
  }
  std::sort(out.begin(), out.end(), [](const NodeInfo& a, const NodeInfo& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> ClusterModel::NodeNames() const {
  std::vector<std::string> out;
  {
    std::shared_lock lock(nodes_mu_);
    out.reserve(nodes_.size());
    for (const auto& [name, node] : nodes_) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<PodGpuInfo> ClusterModel::PodByUid(std::string_view uid) const {
  Reader reader = Read();
  std::optional<PodLocation> loc;
  {
    std::lock_guard ilock(index_mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return std::nullopt;
    loc = it->second;
    if (!nodes_.count(loc->node)) {  // Parked: the node is not known; report the claim.
      auto p = parked_.find(loc->node);
      if (p == parked_.end()) return std::nullopt;
      for (const Holding& h : p->second) {
        if (h.uid != uid) continue;
        PodGpuInfo info = ToInfo(h, loc->node);
        info.gpus = h.claimed;
        info.unknown_identity = h.claimed.empty();
        return info;
      }
      return std::nullopt;
    }
  }
  const NodeState* node = reader.Find(loc->node);
  if (!node) return std::nullopt;
  auto h = node->Find(uid);
  if (!h) return std::nullopt;
  return ToInfo(*h, node->name());
}

std::optional<PodGpuInfo> ClusterModel::PodByName(std::string_view namespace_, std::string_view name) const {
  std::string uid;
  {
    std::lock_guard ilock(index_mu_);
    auto it = uid_by_pod_.find(fmt::format("{}/{}", namespace_, name));
    if (it == uid_by_pod_.end()) return std::nullopt;
    uid = it->second;
  }
  return PodByUid(uid);
}

ClusterTotals ClusterModel::Totals() const {
  ClusterTotals t;
  {
    Reader reader = Read();
    reader.ForEach([&](const NodeState& node) {
      ++t.nodes;
      GpuSet usable = node.usable();
      if (!usable.empty()) ++t.gpu_nodes;
      t.usable_gpus += usable.size();
      t.free_gpus += node.free().size();
      for (const Holding& h : node.Holdings()) {
        if (h.kind == HoldingKind::kReserved) {
          t.reserved_gpus += h.gpus.size();
        } else {
          t.held_gpus += h.gpus.size();
        }
        if (h.unknown_identity) t.unknown_identity_gpus += h.gpus.size();
      }
      if (!node.Warnings().empty()) ++t.nodes_with_warnings;
      t.free_shapes += ShapesOf(node);
    });
  }
  t.pending_pods = static_cast<int>(pending_.size());
  return t;
}

}  // namespace topofit::cluster
