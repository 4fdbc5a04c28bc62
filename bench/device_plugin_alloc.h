#pragma once
// DevicePluginAllocator: the GPU set the stock NVIDIA device plugin hands a pod on a node, so that the
// baseline policies are measured with the set choice a cluster without topofit really gets.
//
// Emulates the best-effort policy of NVIDIA/go-gpuallocator (gpuallocator/besteffort_policy.go, used by
// NVIDIA/k8s-device-plugin's GetPreferredAllocation):
//   - pair score: summed link points, cross-CPU (SYS) 10, same CPU (NODE) 20, host bridge (PHB) 30,
//     multiple PCIe switches (PXB) 40, single switch (PIX) 50, same board 60, plus 100 per NVLink;
//   - set score: sum over its pairs;
//   - it pads the free GPUs with empty slots to a multiple of the request size, tries every split of
//     them into groups of that size (a group holds either no padding or all of it), keeps the first
//     split with the highest total, and returns that split's highest-scoring group (the first on ties).
//   - a request for one GPU returns the first free GPU.
// Assumptions, since we see `nvidia-smi topo -m` and not NVML: an NVLink pair also carries its PCIe
// path, which the matrix hides behind NV#; we count it as same CPU (20) when both GPUs have the same
// NUMA node (or it is unknown) and cross-CPU (10) otherwise. Free GPUs are listed in index order
// (kubelet's order is not specified).
//
// Results are memoised per (free set, size); not thread-safe (each bench run owns its allocators).

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "topology/gpu_set.h"
#include "topology/pair_matrix.h"
#include "topology/topology.h"

namespace topofit::bench {

class DevicePluginAllocator {
 public:
  explicit DevicePluginAllocator(const Topology& topology);
  // numa[i] < 0 means unknown. Empty `numa`: all unknown.
  DevicePluginAllocator(const PairMatrix& pairs, std::vector<int> numa);

  int PairScore(int a, int b) const { return pair_score_[size_t(a) * n_ + b]; }
  int SetScore(GpuSet set) const;
  // The set the device plugin picks, or nullopt when fewer than `size` GPUs are free.
  std::optional<GpuSet> Allocate(GpuSet available, int size);

 private:
  std::optional<GpuSet> Compute(GpuSet available, int size) const;
  int n_ = 0;
  std::vector<int> pair_score_;
  std::unordered_map<uint64_t, GpuSet> memo_;  // key: mask * 65 + size
};

}  // namespace topofit::bench
