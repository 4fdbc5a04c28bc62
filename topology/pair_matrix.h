#pragma once
// PairMatrix: the per-GPU-pair facts that GPU-set selection needs, flattened for speed.
//
// n x n, row-major. link(i, i) is Self and bandwidth(i, i) is 0. Bandwidths are integers in MB/s
// (per direction) so that "equal quality" is exact equality and ties break deterministically.
// Built by Topology from its Boost.Graph model; tests and the oracle may build one directly.

#include <cstdint>
#include <vector>

#include "topology/link_class.h"

namespace topofit {

struct PairMatrix {
  int n = 0;
  std::vector<Link> links;          // n * n
  std::vector<uint32_t> bw_mbps;    // n * n, symmetric

  PairMatrix() = default;
  explicit PairMatrix(int gpus)
      : n(gpus), links(size_t(gpus) * gpus, Link{LinkClass::Self, 0}), bw_mbps(size_t(gpus) * gpus, 0) {}

  Link link(int a, int b) const { return links[size_t(a) * n + b]; }
  uint32_t bw(int a, int b) const { return bw_mbps[size_t(a) * n + b]; }
  void Set(int a, int b, Link l, uint32_t mbps) {
    links[size_t(a) * n + b] = links[size_t(b) * n + a] = l;
    bw_mbps[size_t(a) * n + b] = bw_mbps[size_t(b) * n + a] = mbps;
  }
};

}  // namespace topofit
