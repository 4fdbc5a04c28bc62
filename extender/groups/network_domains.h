#pragma once
// Network domains: where each node sits in the cluster's network, read from its labels - the map a
// group of pods is placed over (group_planner.h).
//
// DomainLevels is the ordered list of levels, broadest first; each level is one or more label keys,
// tried in order (the first key the node carries names its domain there). The defaults cover NVIDIA
// topograph (its three label generations: network.topology.nvidia.com/block, spine, datacenter; .../leaf,
// spine, core; and since v1.0 fabric.topograph.run/tier-N, tier 0 the switch closest to the node, with
// accelerator.topograph.run/domain), GKE, EKS (network node layers top down: a four-layer type's
// layer 4 before layer 3; UltraServers), OKE (OCI's RDMA tiers: HPC island, network block, local block),
// CoreWeave (backend fabric and leaf group, or the older InfiniBand fabric, superpod and leaf group;
// NVL72 racks) and the NVIDIA GPU operator:
//   datacenter   network.topology.nvidia.com/datacenter, .../core, fabric.topograph.run/tier-2,
//                topology.k8s.aws/network-node-layer-1, oci.oraclecloud.com/rdma.hpc_island_id,
//                backend.coreweave.cloud/fabric, ib.coreweave.cloud/fabric
//   spine        network.topology.nvidia.com/spine, fabric.topograph.run/tier-1,
//                cloud.google.com/gce-topology-block, topology.k8s.aws/network-node-layer-2,
//                oci.oraclecloud.com/rdma.network_block_id, ib.coreweave.cloud/superpod
//   block        network.topology.nvidia.com/block, .../leaf, fabric.topograph.run/tier-0,
//                cloud.google.com/gce-topology-subblock, topology.k8s.aws/network-node-layer-4, -3,
//                oci.oraclecloud.com/rdma.local_block_id, backend.coreweave.cloud/leafgroup,
//                ib.coreweave.cloud/leafgroup
//   accelerator  nvidia.com/gpu.clique, network.topology.nvidia.com/accelerator,
//                accelerator.topograph.run/domain, topology.k8s.aws/ultraserver-id,
//                ds.coreweave.com/nvlink.domain   (the NVLink domain; the GPU operator's clique first,
//                the finer NVL partition, as topograph's documentation advises)
//   host         cloud.google.com/gce-topology-host, kubernetes.io/hostname
//
// A domain is identified by its path, not its label value alone: two racks both labelled "r1" in
// different blocks are two domains (as Kueue's TAS assumes). A domain's id at level l is the values of
// the used levels above l, then its own value.
// Not errors, and what they mean:
//   - a node carrying none of a level's keys is a domain of its own at that level (NodeDomain::missing,
//     so explain can say so), and therefore also at every level below it;
//   - a level no node carries at all is unused: it splits nothing above or below it (an unlabelled
//     datacenter level does not make every node its own spine), though a group that names it still gets
//     one-node domains there (group_planner.h);
//   - an empty label value is a value like any other.
// DomainLevels::Validate rejects what cannot be a hierarchy: no level, an unnamed level, a level without
// keys, two levels of one name.
// Pure values; DomainMap is immutable once built (thread-safe to read).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "extender/cluster/cluster_model.h"

namespace topofit::groups {

struct DomainLevel {
  std::string name;               // "block"
  std::vector<std::string> keys;  // Label keys, tried in order.
  friend bool operator==(const DomainLevel&, const DomainLevel&) = default;
};

struct DomainLevels {
  std::vector<DomainLevel> levels;  // Broadest first.

  static DomainLevels Defaults();
  // The level named `name_or_key`, or the first level that lists it as a key (case-sensitive, as
  // label keys are); -1 when none.
  int Find(std::string_view name_or_key) const;
  Status Validate() const;
  int size() const { return static_cast<int>(levels.size()); }
  friend bool operator==(const DomainLevels&, const DomainLevels&) = default;
};

// A node's domain at one level.
struct NodeDomain {
  std::string value;     // The label's value; the node's name when missing.
  std::string key;       // The label key it came from; "" when missing.
  bool missing = false;  // The node carries no key of the level: a domain of its own.
  friend bool operator==(const NodeDomain&, const NodeDomain&) = default;
};

// One NodeDomain per level of the DomainLevels it was read with.
std::vector<NodeDomain> DomainsOf(std::string_view node, const std::map<std::string, std::string>& labels,
                                  const DomainLevels& levels);

struct NodeLabels {
  std::string name;
  std::map<std::string, std::string> labels;
};

class DomainMap {
 public:
  // Nodes are kept sorted by name (a name given twice keeps its last labels).
  static DomainMap Build(const DomainLevels& levels, std::vector<NodeLabels> nodes);
  // Every node of the model, with the labels it last reported (ClusterModel::Nodes()).
  static DomainMap FromModel(const cluster::ClusterModel& model, const DomainLevels& levels);

  const DomainLevels& levels() const { return levels_; }
  size_t size() const { return names_.size(); }
  const std::string& name(size_t node) const { return names_[node]; }
  std::optional<size_t> Find(std::string_view node) const;  // O(1): a hash lookup.
  const NodeDomain& domain_of(size_t node, int level) const { return domains_[node][level]; }
  // True when some node carries a key of the level.
  bool used(int level) const { return used_[level]; }
  // Dense ids: nodes with equal ids at a level are in one domain there (see the path rule above).
  uint32_t id(size_t node, int level) const { return ids_[node][level]; }
  uint32_t domain_count(int level) const { return static_cast<uint32_t>(id_names_[level].size()); }
  // The domain's path, "s1/b2" (the used levels above, then the level's own value).
  const std::string& domain_name(int level, uint32_t id) const { return id_names_[level][id]; }
  // How many nodes carry none of the level's keys.
  int missing_count(int level) const;

 private:
  DomainLevels levels_;
  std::vector<std::string> names_;
  std::vector<std::vector<NodeDomain>> domains_;  // [node][level]
  std::vector<std::vector<uint32_t>> ids_;        // [node][level]
  std::vector<std::vector<std::string>> id_names_;  // [level][id]
  std::vector<bool> used_;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> index_;  // Name -> node.
};

}  // namespace topofit::groups
