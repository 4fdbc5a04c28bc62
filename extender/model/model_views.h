#pragma once
// Read-only views of the cluster model for the REST query endpoints, /metrics and explain.
//
// Plain copies taken under the model's locks; holding one never blocks the model. Rendering to JSON
// or Prometheus text is the server's business.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "extender/model/free_shapes.h"
#include "extender/model/holding.h"
#include "extender/model/topology_resolver.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::model {

// One pod's GPUs on one node. `gpus` is what the model counts (see holding.h).
struct PodGpuInfo {
  std::string uid;
  std::string pod;        // "namespace/name"
  std::string node;
  GpuSet gpus;
  int count = 0;
  HoldingKind kind = HoldingKind::kBound;
  bool unknown_identity = false;  // `gpus` is a pessimistic guess.
  std::string conflict;           // Why the pod's own claim was not honoured.
  int32_t priority = 0;
};

struct NodeInfo {
  std::string name;
  std::shared_ptr<const Topology> topology;  // null when the node has no GPUs.
  TopologySource source = TopologySource::kNone;
  std::string profile;               // Built-in profile name, "" for matrix text / no GPUs.
  int gpu_count = 0;                 // GPUs in the topology.
  int allocatable = 0;
  GpuSet usable;
  GpuSet free;
  std::vector<PodGpuInfo> pods;      // Who holds which GPU, in arrival order.
  std::vector<std::string> warnings; // Topology resolution, annotation conflicts, over-commitment.
  std::map<std::string, std::string> labels;  // The Node's labels, as last seen.
  FreeShapes free_shapes;
};

struct ClusterTotals {
  int nodes = 0;
  int gpu_nodes = 0;          // Nodes with at least one usable GPU.
  int usable_gpus = 0;
  int free_gpus = 0;
  int held_gpus = 0;          // Bound + confirmed.
  int reserved_gpus = 0;      // Reservations in flight.
  int unknown_identity_gpus = 0;
  int nodes_with_warnings = 0;
  int pending_pods = 0;       // In the pending-pod cache.
  FreeShapes free_shapes;     // Sum over nodes.
};

}  // namespace topofit::model
