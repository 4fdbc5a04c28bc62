#pragma once
// SimCluster: the simulated cluster a bench run places pods on - what kube-scheduler itself checks
// before any extender or score plugin runs.
//
// Filtering (Fits) is kube-scheduler's own: free CPU >= request, free memory >= request, free GPU count
// >= request (NodeResourcesFit), and the pod's gpu_spec model list (a node selector on the GPU model in
// the openb trace's cluster). GPU identities are tracked as a free GpuSet per node, because the
// policies under test differ precisely in which GPUs they take.
//
// Nodes of one (model, GPU count) share a NodeType: its interned Topology and derived tables. A node
// with GFD sharing labels (NodeSpec::labels) is resolved by the extender's own TopologyResolver
// (shared_node_types.h): its type's topology is that of its devices, `physical` that of its GPUs and
// `shared` says which device is on which GPU - the model `topofit serve` builds from the same labels.
// Not thread-safe: each run owns its own SimCluster (Reset() puts it back to empty).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/gpu_models.h"
#include "bench/workload.h"
#include "extender/cluster/shared_devices.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::bench {

struct NodeType {
  int id = 0;
  std::string model;
  int gpus = 0;
  std::string topology_spec;                  // Profile name or topo -m file, from the GPU model map.
  // What a node of this type carries in its topofit.io/gpu-topology annotation for topofit's model:
  // the profile name, or the topo -m text itself. Filled by Build.
  std::string annotation;
  std::shared_ptr<const Topology> topology;   // null for CPU-only nodes. Of the devices on a shared node.
  std::shared_ptr<const Topology> physical;   // The physical GPUs' on a shared node; else == topology.
  cluster::SharedDevices shared;              // What each device is; mode kNone when not shared.
};

struct SimNode {
  const NodeSpec* spec = nullptr;
  int type = -1;
  int model_id = -1;        // Index into SimCluster::models(); -1 for CPU-only nodes.
  int64_t free_cpu = 0;
  int64_t free_mem = 0;
  GpuSet all;
  GpuSet free;
  bool dra = false;         // GPUs served by kube-scheduler's DRA allocator, not the device plugin (dra_nodes.h).
  int free_gpus() const { return free.size(); }
  int used_gpus() const { return all.size() - free.size(); }
};

class SimCluster {
 public:
  // Resolves every node's topology through `map` (nodes with a NodeSpec::profile skip the map).
  static Result<std::unique_ptr<SimCluster>> Build(std::vector<NodeSpec> nodes, const GpuModelMap& map);
  // For tests and the recorded-trace replay: the caller names each node type's topology directly.
  static Result<std::unique_ptr<SimCluster>> Build(std::vector<NodeSpec> nodes,
                                                   std::vector<NodeType> types,
                                                   std::vector<int> type_of_node);

  const std::vector<SimNode>& nodes() const { return nodes_; }
  const SimNode& node(int i) const { return nodes_[i]; }
  const std::vector<NodeType>& types() const { return types_; }
  const NodeType& type_of(int node) const { return types_[nodes_[node].type]; }
  const std::vector<std::string>& models() const { return models_; }
  int64_t gpu_capacity() const { return gpu_capacity_; }
  int64_t gpus_allocated() const { return gpus_allocated_; }
  // Whether node i's GPUs are DRA-backed (MarkDraNodes); kept by Reset and Clone.
  void set_dra(int i, bool dra) { nodes_[i].dra = dra; }
  bool any_dra() const;

  // Bitmask of models (bit = index in models()) a pod accepts; ~0 when any model will do.
  uint64_t AllowedModels(const PodSpec& pod) const;
  // kube-scheduler's own filters for `pod` on node i (see the class comment).
  bool Fits(const PodSpec& pod, uint64_t allowed_models, int i) const;
  // All nodes passing Fits, in node order.
  void Feasible(const PodSpec& pod, std::vector<int>* out) const;

  // kube-scheduler's percentageOfNodesToScore: 100 (what manifests/ deploys) scores every feasible
  // node; 1..99 that share of the nodes; 0 its adaptive default (50% - 1% per 125 nodes, at least 5%),
  // and never fewer than 100 nodes (numFeasibleNodesToFind in its schedule_one.go).
  void set_percentage_of_nodes_to_score(int percent) { percentage_of_nodes_to_score_ = percent; }
  int percentage_of_nodes_to_score() const { return percentage_of_nodes_to_score_; }
  // The feasible nodes kube-scheduler finds before it stops searching: it examines nodes in order
  // from where the previous pod's search stopped (wrapping), keeps the first numFeasibleNodesToFind
  // that pass, and the next search starts past every node this one examined. `feasible` is
  // Feasible's output; `out` gets the nodes found, in the order examined. Advances the start.
  void NodesFound(const std::vector<int>& feasible, std::vector<int>* out);

  // Takes the pod's CPU, memory and `gpus` (a subset of the node's free GPUs) on node i.
  void Bind(int i, const PodSpec& pod, GpuSet gpus);
  void Release(int i, const PodSpec& pod, GpuSet gpus);
  void Reset();
  // An independent copy in its initial state, sharing the (immutable) topologies: one per thread.
  std::unique_ptr<SimCluster> Clone() const;

 private:
  SimCluster() = default;
  std::vector<NodeSpec> specs_;
  std::vector<NodeType> types_;
  std::vector<SimNode> nodes_;
  std::vector<std::string> models_;
  int64_t gpu_capacity_ = 0;
  int64_t gpus_allocated_ = 0;
  int percentage_of_nodes_to_score_ = 100;
  int next_start_node_ = 0;  // kube-scheduler's nextStartNodeIndex.
};

}  // namespace topofit::bench
