#pragma once
// What a bench run measures on a cluster whose GPUs are partly shared (docs/shared-gpus.md, "Bench"),
// beside RunMetrics' device counts:
//   - doubled pods: pods placed on a time-sliced or MPS node, not annotated
//     topofit.io/replica-placement: packed, that got two or more replicas of one physical GPU;
//   - unallocated whole GPUs: physical GPUs none of whose devices is allocated (a whole node's free
//     GPU; every replica or MIG device of a shared GPU free), % of the cluster's physical GPUs;
//   - ring bandwidth of multi-device pods by the kind of node they landed on (whole GPUs, replicas,
//     MIG devices), a doubled pod's left out (its ring would run twice over one GPU).
// FormatSharedTable folds the runs of each policy into one row. Pure functions of their inputs.

#include <cstdint>
#include <string>
#include <vector>

#include "bench/run_metrics.h"
#include "bench/sim_cluster.h"
#include "extender/cluster/shared_devices.h"
#include "topology/gpu_set.h"

namespace topofit::bench {

// What MultiGpuPlacement::kind says: the kind of devices of the node.
enum class DeviceKind : uint8_t { kWhole, kReplica, kMig };
DeviceKind KindOf(const cluster::SharedDevices& shared);

// Devices of `devices` beyond one per physical GPU: 0 unless two or more are replicas of one GPU
// (MIG devices of one GPU are distinct devices, never counted; so are whole GPUs).
int ExtraReplicas(const cluster::SharedDevices& shared, GpuSet devices);

struct WholeGpus {
  int64_t free = 0;   // Physical GPUs with every device free.
  int64_t total = 0;  // Physical GPUs of the cluster.
};
// The cluster's physical GPUs, now.
WholeGpus CountWholeGpus(const SimCluster& cluster);

// True when some node type of the cluster shares its GPUs.
bool HasSharedNodes(const SimCluster& cluster);

// One row per policy (first-seen order): doubled pods (mean per run and % of the placed multi-device
// pods on replica nodes that did not ask to be packed), unallocated whole GPUs (mean of the runs), mean ring bandwidth of multi-device pods per kind of node. "" when no run was on a shared
// cluster.
std::string FormatSharedTable(const std::vector<RunMetrics>& runs);

}  // namespace topofit::bench
