#pragma once
// FreeGpus: the cluster's free GPUs now, counted by GPU product (nvidia.com/gpu.product, interned as a
// GpuProductId; 0 = unknown product), and the distinct node types that hold them. ClusterModel's
// readers count it (Reader::FreeByProduct); the product shortfall (placement/) weighs it. Plain data:
// no locking, no validation; a product added twice accumulates, one never added has 0 free.

#include <cstdint>
#include <utility>
#include <vector>

#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::cluster {

struct FreeGpus {
  int64_t total = 0;
  std::vector<std::pair<uint32_t, int64_t>> by_product;
  struct NodeType {
    const Topology* topology = nullptr;  // Valid while the model's reader that counted it lives.
    GpuSet usable;
    uint32_t product = 0;
  };
  std::vector<NodeType> types;  // Each distinct (topology, usable GPUs, product) of the nodes with GPUs.

  void Add(uint32_t product, int64_t gpus);
  int64_t Of(uint32_t product) const;
};

}  // namespace topofit::cluster
