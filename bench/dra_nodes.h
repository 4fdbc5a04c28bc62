#pragma once
// DRA-backed GPU nodes in the bench (`--dra-nodes`, docs/dra.md "Bench"): which nodes of a SimCluster
// kube-scheduler's DRA allocator serves, the GPUs that allocator gives a pod there, and the
// resource.k8s.io objects through which topofit's model learns them - the objects `topofit serve`
// reads from the API server (DeviceClass, ResourceSlice, ResourceClaim), fed to the same DraCluster.
//
// - DraNodes: kNone (every GPU node's GPUs served by the device plugin, the bench as before), kAll, or
//   kHalf (a mixed cluster: of each node type, the 1st, 3rd, 5th, ... node in node order is DRA-backed).
// - DraFirstFit: the in-tree allocator's choice for a pod's nvidia.com/gpu (one exact-count request, no
//   constraint): the first `k` free devices in the allocator's order. The bench publishes each node's
//   GPUs in one slice of one pool, devices gpu-0 .. gpu-<n-1> in GPU index order with ascending PCI
//   bus ids, so that order is the index order: the first fit is the k lowest free indices. It is the
//   bench's stand-in for kube-scheduler, independent of topofit's prediction (Placer::FirstFit), which
//   the topofit policy checks against it (ExtenderStats::dra_mispredicted).
// - GpuDeviceClass / NodeGpuSlice / PodGpuClaim: the DeviceClass mapping nvidia.com/gpu (NVIDIA's
//   selector), a DRA node's ResourceSlice, and the claim kube-scheduler writes for a pod's
//   nvidia.com/gpu at PreBind, allocated to `gpus` of `node`.
//
// Errors: ParseDraNodes refuses a name other than none, all, half. DraFirstFit returns an empty set
// when fewer than k GPUs are free. Plain functions of their arguments; thread-safe.

#include <string>
#include <string_view>

#include "base/status.h"
#include "bench/sim_cluster.h"
#include "extender/k8s/dra_objects.h"
#include "topology/gpu_set.h"

namespace topofit::bench {

enum class DraNodes { kNone, kAll, kHalf };

Result<DraNodes> ParseDraNodes(std::string_view name);
std::string_view DraNodesName(DraNodes mode);
// Marks the cluster's GPU nodes DRA-backed (SimNode::dra) as `mode` says; CPU-only nodes never are.
void MarkDraNodes(SimCluster& cluster, DraNodes mode);

GpuSet DraFirstFit(const SimNode& node, int k);

k8s::DeviceClassObject GpuDeviceClass();
k8s::ResourceSliceObject NodeGpuSlice(const SimNode& node);
// The claim's uid: "claim-<pod uid>".
k8s::ResourceClaimObject PodGpuClaim(const std::string& pod_uid, const std::string& node, GpuSet gpus);
std::string PodGpuClaimUid(const std::string& pod_uid);

}  // namespace topofit::bench
