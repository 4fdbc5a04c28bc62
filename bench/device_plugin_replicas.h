#pragma once
// The devices the stock NVIDIA device plugin hands a pod on a node whose GPUs are shared (time-slicing
// or MPS replicas, MIG devices): the baseline's choice where DevicePluginAllocator (whole GPUs) does not
// apply.
//
// NVIDIA/k8s-device-plugin, internal/rm/nvml_manager.go getPreferredAllocation (read at commit 1b826acc,
// August 2026): the topology-aware alignedAlloc only when every available device is a whole GPU (no
// "<uuid>::<n>" replica id) and the devices support it (MIG devices do not); otherwise greedyAlloc
// (internal/rm/allocate.go) under the plugin's sharedDevicesAllocationPolicy, "distributed" by default:
//   - per physical GPU (a device's id without its "::<n>" suffix), total = its devices, available = its
//     candidates; allocated = total - available;
//   - `size` times: sort the candidates by the comparator (distributed: the fewest allocated first;
//     packed: the most) and then by how many were picked from that GPU in this call, take the first,
//     count it as allocated.
// It counts replicas, never links: with distributed, a GPU with few replicas held is taken again for
// the pod's second replica when every other GPU has more held (two replicas of one GPU for a pod that
// asked for two GPUs). A MIG device's id is its own UUID, so every MIG candidate is a "GPU" of one device
// with nothing allocated: all tie and the order of the list decides.
// Ties: kubelet passes the available devices as an unordered set's list and Go's sort.Slice is not
// stable, so among candidates of equal key the choice is modelled as uniformly random (`rng`).
//
// Not an error: fewer free devices than `size` (nullopt). Values only; not thread-safe through `rng`.

#include <optional>
#include <random>

#include "extender/cluster/shared_devices.h"
#include "topology/gpu_set.h"

namespace topofit::bench {

enum class SharedAllocationPolicy { kDistributed, kPacked };

// `all`: the node's devices; `free`: those available. `shared` must be a sharing mode.
std::optional<GpuSet> DevicePluginSharedChoice(const cluster::SharedDevices& shared, GpuSet all, GpuSet free, int size,
                                               std::mt19937_64& rng,
                                               SharedAllocationPolicy policy = SharedAllocationPolicy::kDistributed);

}  // namespace topofit::bench
