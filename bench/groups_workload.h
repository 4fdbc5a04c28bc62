#pragma once
// Group workloads for the groups replay (groups_replay.h): job sizes drawn from a size mix, turned into
// groups of pods on a cluster shape modelled on a real product, and the labelled cluster itself.
//
// Size mixes (docs/groups.md gives the sources and what each figure is):
//   helios-fit  total GPUs 1, 2, 4, ..., 64 with weights halving at each step: median 1 and mean 3.53
//               GPUs, against the median 1 and mean 3.72 GPUs of the GPU jobs of SenseTime's Helios
//               (Hu et al., SC'21; the artifact's per-cluster summary). A fit to two published figures,
//               not the trace's distribution.
//   multi-node  8, 16, 32, 64 or 128 GPUs, equally likely: a synthetic stress mix of multi-node jobs
//               (no published distribution behind it).
//   openb+multi-node  pods of no group with the GPU counts of openb's default pod list (1, 2, 4 or 8
//               GPUs, weighted by how many of its pods ask each: 6,989, 16, 15, 44; a pod sharing a GPU
//               counts as 1) beside the multi-node jobs as groups, each half of the GPUs asked.
// Shapes:
//   h100-spine  8-GPU nodes (hgx-h100-8), 32 nodes per leaf block, 4 blocks per spine, 2 spines (256
//               nodes, 2,048 GPUs); labels network.topology.nvidia.com/spine and /block, hostname.
//   gb200-nvl72 4-GPU nodes (hgx-h100-4 stands in for a GB200 compute tray), 18 nodes per NVLink domain
//               (nvidia.com/gpu.clique: 72 GPUs), 4 domains per block, 2 blocks (144 nodes, 576 GPUs).
// A job of G GPUs on nodes of n GPUs is a group of max(1, G / n) members of min(G, n) GPUs each (sizes
// are powers of two). Its level is the narrowest whose domains hold G GPUs, required; a job larger
// than every domain is preferred at the broadest level (it may span the cluster).
// Deterministic: the same seed gives the same arrivals.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "extender/cluster/cluster_model.h"
#include "extender/groups/group_spec.h"
#include "extender/groups/network_domains.h"

namespace topofit::bench {

struct SizeMix {
  std::string name;
  struct Entry {
    int gpus;
    double weight;
    bool single = false;  // A pod of no group (GroupArrival::single), not a job of one or more members.
  };
  std::vector<Entry> entries;
  double MeanGpus() const;
  int MedianGpus() const;  // The smallest size whose cumulative weight reaches half.
};

Result<SizeMix> GroupSizeMix(const std::string& name);  // "helios-fit", "multi-node" or "openb+multi-node"

struct ClusterShape {
  std::string name;
  std::string profile;      // Node topology (built-in profile).
  int gpus_per_node = 0;
  // Nodes per domain at each network level below the broadest, broadest first, e.g. {4, 32}: 4 blocks
  // per spine, 32 nodes per block. The broadest level holds `top_domains` domains.
  std::vector<std::string> level_keys;  // The label of each level, broadest first.
  std::vector<int> fanout;              // Children per domain at each level, broadest first (last: nodes).
  int top_domains = 1;
  // The all-reduce model (groups_replay.h): each GPU's bandwidth one way, GB/s, over NVLink (inside a
  // node, and inside a domain of level `nvlink_level`, an index into level_keys; -1: none) and over
  // the network (its own NIC; the fabric above it non-blocking).
  double nvlink_gbps = 0;
  double nic_gbps = 0;
  int nvlink_level = -1;
  int nodes() const;
  int gpus() const { return nodes() * gpus_per_node; }
  // GPUs one domain of level i holds (i == fanout.size(): one node).
  int DomainGpus(int level) const;
};

Result<ClusterShape> GroupClusterShape(const std::string& name);  // "h100-spine" or "gb200-nvl72"

// Adds every node of the shape to `model`, labelled; names are "<prefix>-<i>".
void AddShapeNodes(const ClusterShape& shape, cluster::ClusterModel& model);
// The levels the shape's labels fill, in the default DomainLevels (their indices there).
std::vector<int> ShapeLevels(const ClusterShape& shape, const groups::DomainLevels& levels);

struct GroupArrival {
  groups::GroupSpec spec;
  bool single = false;  // A pod of no group: placed as kube-scheduler (with or without topofit) places one
                        // (GroupPolicy::PlacePod); spec is then one member at the host level, preferred.
  int total_gpus = 0;
  int lifetime = 0;  // Arrivals until it leaves (when placed and departures are on).
};

// `count` arrivals; lifetimes exponential with mean `mean_lifetime` arrivals (at least 1).
std::vector<GroupArrival> GenerateGroups(const SizeMix& mix, const ClusterShape& shape,
                                         const groups::DomainLevels& levels, int count, double mean_lifetime,
                                         uint64_t seed);

// The GroupSpec of a job of `gpus` GPUs on `shape` (see above).
groups::GroupSpec GroupForJob(const ClusterShape& shape, const groups::DomainLevels& levels, int gpus, int index);

}  // namespace topofit::bench
