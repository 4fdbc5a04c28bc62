#include "extender/groups/network_domains.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

namespace topofit::groups {

DomainLevels DomainLevels::Defaults() {
  return DomainLevels{{
      {"datacenter",
       {"network.topology.nvidia.com/datacenter", "network.topology.nvidia.com/core", "fabric.topograph.run/tier-2",
        "topology.k8s.aws/network-node-layer-1", "oci.oraclecloud.com/rdma.hpc_island_id",
        "backend.coreweave.cloud/fabric", "ib.coreweave.cloud/fabric"}},
      {"spine",
       {"network.topology.nvidia.com/spine", "fabric.topograph.run/tier-1", "cloud.google.com/gce-topology-block",
        "topology.k8s.aws/network-node-layer-2", "oci.oraclecloud.com/rdma.network_block_id",
        "ib.coreweave.cloud/superpod"}},
      {"block",
       {"network.topology.nvidia.com/block", "network.topology.nvidia.com/leaf", "fabric.topograph.run/tier-0",
        "cloud.google.com/gce-topology-subblock", "topology.k8s.aws/network-node-layer-4",
        "topology.k8s.aws/network-node-layer-3", "oci.oraclecloud.com/rdma.local_block_id",
        "backend.coreweave.cloud/leafgroup", "ib.coreweave.cloud/leafgroup"}},
      {"accelerator",
       {"nvidia.com/gpu.clique", "network.topology.nvidia.com/accelerator", "accelerator.topograph.run/domain",
        "topology.k8s.aws/ultraserver-id", "ds.coreweave.com/nvlink.domain"}},
      {"host", {"cloud.google.com/gce-topology-host", "kubernetes.io/hostname"}},
  }};
}

int DomainLevels::Find(std::string_view name_or_key) const {
  for (int i = 0; i < size(); ++i) {
    if (levels[i].name == name_or_key) return i;
  }
  for (int i = 0; i < size(); ++i) {
    const auto& keys = levels[i].keys;
    if (std::find(keys.begin(), keys.end(), name_or_key) != keys.end()) return i;
  }
  return -1;
}

Status DomainLevels::Validate() const {
  if (levels.empty()) return Error{"domain levels: none given"};
  std::set<std::string> names;
  for (size_t i = 0; i < levels.size(); ++i) {
    const DomainLevel& l = levels[i];
    if (l.name.empty()) return Error{fmt::format("domain level {}: no name", i + 1)};
    if (!names.insert(l.name).second) return Error{fmt::format("domain level '{}' is given twice", l.name)};
    if (l.keys.empty()) return Error{fmt::format("domain level '{}': no label key", l.name)};
    for (const std::string& k : l.keys) {
      if (k.empty()) return Error{fmt::format("domain level '{}': an empty label key", l.name)};
    }
  }
  return Status::Ok();
}

std::vector<NodeDomain> DomainsOf(std::string_view node, const std::map<std::string, std::string>& labels,
                                  const DomainLevels& levels) {
  std::vector<NodeDomain> out;
  out.reserve(levels.levels.size());
  for (const DomainLevel& level : levels.levels) {
    NodeDomain d;
    d.missing = true;
    d.value = std::string(node);
    for (const std::string& key : level.keys) {
      if (auto it = labels.find(key); it != labels.end()) {
        d = NodeDomain{it->second, key, false};
        break;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

DomainMap DomainMap::Build(const DomainLevels& levels, std::vector<NodeLabels> nodes) {
  std::stable_sort(nodes.begin(), nodes.end(), [](const NodeLabels& a, const NodeLabels& b) { return a.name < b.name; });
  // A name given twice keeps its last labels.
  std::vector<NodeLabels> unique;
  for (auto& n : nodes) {
    if (!unique.empty() && unique.back().name == n.name) {
      unique.back() = std::move(n);
    } else {
      unique.push_back(std::move(n));
    }
  }
  DomainMap m;
  m.levels_ = levels;
  const int L = levels.size();
  m.used_.assign(L, false);
  for (const NodeLabels& n : unique) {
    m.index_.emplace(n.name, static_cast<uint32_t>(m.names_.size()));
    m.names_.push_back(n.name);
    m.domains_.push_back(DomainsOf(n.name, n.labels, levels));
    for (int l = 0; l < L; ++l) {
      if (!m.domains_.back()[l].missing) m.used_[l] = true;
    }
  }
  m.id_names_.assign(L, {});
  m.ids_.assign(m.names_.size(), std::vector<uint32_t>(L, 0));
  for (int l = 0; l < L; ++l) {
    std::unordered_map<std::string, uint32_t> by_path;
    for (size_t i = 0; i < m.names_.size(); ++i) {
      std::string path;
      for (int a = 0; a < l; ++a) {
        if (!m.used_[a]) continue;
        path += m.domains_[i][a].missing ? "node:" + m.names_[i] : m.domains_[i][a].value;
        path += '/';
      }
      path += m.domains_[i][l].missing ? "node:" + m.names_[i] : m.domains_[i][l].value;
      auto [it, inserted] = by_path.emplace(path, static_cast<uint32_t>(m.id_names_[l].size()));
      if (inserted) m.id_names_[l].push_back(path);
      m.ids_[i][l] = it->second;
    }
  }
  return m;
}

DomainMap DomainMap::FromModel(const cluster::ClusterModel& model, const DomainLevels& levels) {
  std::vector<NodeLabels> nodes;
  for (cluster::NodeInfo& info : model.Nodes()) nodes.push_back({std::move(info.name), std::move(info.labels)});
  return Build(levels, std::move(nodes));
}

std::optional<size_t> DomainMap::Find(std::string_view node) const {
  auto it = index_.find(node);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

int DomainMap::missing_count(int level) const {
  int n = 0;
  for (const auto& d : domains_) n += d[level].missing ? 1 : 0;
  return n;
}

}  // namespace topofit::groups
