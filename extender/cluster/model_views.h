#pragma once
// Read-only views of the cluster model for the REST query endpoints, /metrics and explain.
//
// Plain copies taken under the model's locks; holding one never blocks the model. Rendering to JSON
// or Prometheus text is the server's business.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/cluster/free_shapes.h"
#include "extender/cluster/holding.h"
#include "extender/cluster/topology_resolver.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::cluster {

// One GPU's state on its node, as the model sees it:
//   free       no pod holds it.
//   planned    topofit placed a pod on it (plan, gpu-ids or a bind in flight); not observed yet.
//   in-use     the node side observed a topofit-placed pod's container holding it (gpu-actual).
//   foreign    held by a pod topofit did not place: observed without a plan, or bound by another
//              scheduler with a GPU request (then `guessed`: which GPUs is not known).
//   unhealthy  the node reports it unhealthy (a pod may still hold it: `pod` says which).
//   unusable   the node does not report health and allocatable is below the GPU count: topofit
//              guesses the first allocatable GPUs are the usable ones and this is not one of them.
// A GPU of a pod that is terminating keeps its state (with `terminating`) until the pod is terminal
// or gone: kubelet frees devices only then.
enum class GpuState : uint8_t { kFree, kPlanned, kInUse, kForeign, kUnhealthy, kUnusable };
std::string_view ToString(GpuState state);  // "free", "planned", "in-use", "foreign", "unhealthy", "unusable"

struct GpuStateInfo {
  int index = 0;           // The device's index; the GPU's unless the node shares its GPUs.
  int gpu = 0;             // The physical GPU it is (or is on: a replica, a MIG device).
  std::string device;      // On a shared node, which device of `gpu`: "replica 1", "MIG 1g.10gb #3"; else "".
  std::string uuid;        // The physical GPU's; "" when the node publishes no UUID map.
  std::string pci_bus_id;  // "" when not published.
  GpuState state = GpuState::kFree;
  std::string pod;         // "namespace/name" of the holder; "" when none.
  std::string uid;
  std::string container;   // The holder's container, when its plan or actual names it.
  bool terminating = false;
  bool guessed = false;    // The holder's GPUs are of unknown identity; this is the model's guess.
};

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
  HoldState state = HoldState::kPlanned;
  bool terminating = false;
  bool observed = false;          // The node side reported the pod's GPUs (gpu-actual).
  std::vector<std::pair<std::string, GpuSet>> containers;  // Per container: actual, else plan.
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
  std::vector<GpuStateInfo> gpus;    // One per GPU of the topology, by index.
  bool observed = false;             // The node reports health and gpu-actual.
  std::vector<std::string> warnings; // Topology resolution, annotation conflicts, over-commitment.
  std::map<std::string, std::string> labels;  // The Node's labels, as last seen.
  FreeShapes free_shapes;            // Of whole free GPUs (on a shared node, of its physical GPUs).
  SharedDevices shared;              // What each device is when the node shares its GPUs.
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

}  // namespace topofit::cluster
