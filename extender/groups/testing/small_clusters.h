#pragma once
// Small labelled clusters for the groups tests: nodes of one built-in profile in blocks (and spines),
// some GPUs held by pods bound with topofit.io/gpu-ids, read back as GroupNodes.

#include <map>
#include <random>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/groups/network_domains.h"
#include "topology/gpu_set.h"

namespace topofit::groups::testing {

// spine > block > host, each one label.
inline DomainLevels SmallLevels() {
  return DomainLevels{{{"spine", {"spine"}}, {"block", {"block"}}, {"host", {"host"}}}};
}

struct SmallNode {
  std::string name;
  std::map<std::string, std::string> labels;
  GpuSet held;  // GPUs a pod holds.
};

// Adds the nodes to `model` (profile `profile`, `gpus` GPUs each) with their held GPUs.
inline void AddNodes(cluster::ClusterModel& model, const std::vector<SmallNode>& nodes, const std::string& profile,
                     int gpus) {
  for (const SmallNode& n : nodes) {
    model.ApplyNode(cluster::testing::MakeNode(n.name, gpus, profile, n.labels));
    if (!n.held.empty()) {
      model.ApplyPod(cluster::testing::MakePod("hold-" + n.name, n.held.size(), n.name, n.held.ToString()));
    }
  }
}

// `blocks` blocks of `per_block` nodes named b<i>-n<j>, all in spine s1, with nothing held.
inline std::vector<SmallNode> Blocks(int blocks, int per_block) {
  std::vector<SmallNode> out;
  for (int b = 1; b <= blocks; ++b) {
    for (int j = 1; j <= per_block; ++j) {
      std::string name = "b" + std::to_string(b) + "-n" + std::to_string(j);
      out.push_back({name, {{"spine", "s1"}, {"block", "b" + std::to_string(b)}, {"host", name}}, GpuSet()});
    }
  }
  return out;
}

// A random subset of the first `gpus` GPUs, each held with probability `p`.
inline GpuSet RandomHeld(std::mt19937_64& rng, int gpus, double p) {
  std::bernoulli_distribution coin(p);
  GpuSet s;
  for (int i = 0; i < gpus; ++i) {
    if (coin(rng)) s.Add(i);
  }
  return s;
}

}  // namespace topofit::groups::testing
