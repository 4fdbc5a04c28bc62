#pragma once
// FreeShapes: how many more NVLink jobs of 2, 4 and 8 GPUs a node (or the cluster) could start now.
//
// Definition (what /metrics and /api/v1/nodes report): for size s, the MAXIMUM NUMBER OF DISJOINT
// sets of s free GPUs whose every pair is NVLink-connected (link class NV, any NVLink count). So a
// free DGX-1 V100 reports 2-sets 4, 4-sets 2 (the two fully meshed quads), 8-sets 0 (not every pair
// of the eight has NVLink); a free HGX A100 (NVSwitch) reports 4, 2, 1. Disjoint counts add up
// across nodes, so the cluster total is the sum. Exact for nodes of up to 16 GPUs (search over the
// free mask); larger nodes use a greedy packing (a lower bound).
//
// FreeShapeCounter memoises per (topology, free mask): 5,000 nodes of a few machine types have few
// distinct states. Thread-safe.

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::cluster {

struct FreeShapes {
  static constexpr std::array<int, 3> kSizes = {2, 4, 8};
  std::array<int, 3> nvlink_sets{0, 0, 0};  // Indexed like kSizes.

  int of_size(int s) const {
    for (size_t i = 0; i < kSizes.size(); ++i)
      if (kSizes[i] == s) return nvlink_sets[i];
    return 0;
  }
  FreeShapes& operator+=(const FreeShapes& o) {
    for (size_t i = 0; i < kSizes.size(); ++i) nvlink_sets[i] += o.nvlink_sets[i];
    return *this;
  }
  friend bool operator==(const FreeShapes&, const FreeShapes&) = default;
};

// Uncached computation.
FreeShapes CountFreeShapes(const Topology& topology, GpuSet free);

class FreeShapeCounter {
 public:
  FreeShapes Count(const std::shared_ptr<const Topology>& topology, GpuSet free);

 private:
  struct Key {
    const Topology* topology;
    uint64_t free;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  static constexpr size_t kLimit = 1 << 16;
  std::mutex mu_;
  std::unordered_map<Key, FreeShapes, KeyHash> memo_;
  // Keeps memoised topologies alive, so a pointer key is never reused by another topology.
  std::unordered_map<const Topology*, std::shared_ptr<const Topology>> pins_;
};

}  // namespace topofit::cluster
