#pragma once
// Seeded synthetic workloads: a cluster from a node-type mix and pods from a request-size mix, for
// what-if runs on clusters other than openb's ("what if half my nodes were HGX?").
//
//   node mix "dgx1-v100:16,pcie-8-dual-socket:16" - built-in profile (or topo -m file) : node count.
//            Each node gets 12 cores and 48 GiB per GPU (openb's 8-GPU nodes have about that).
//   size mix "1:70,2:10,4:10,8:10" - GPUs per pod : relative weight; size 0 means CPU-only pods.
//   Pods ask for 4-12 cores and 16-64 GiB per GPU (uniform), so CPU and memory matter as in openb.
//   With time: arrivals are a Poisson process (mean gap 60 s) and lifetimes exponential (mean
//   `mean_lifetime_s`), so the cluster fills and drains; without, all times are 0 and nothing departs.
// Same seed, same workload.

#include <cstdint>
#include <string>

#include "base/status.h"
#include "bench/workload.h"

namespace topofit::bench {

struct SyntheticSpec {
  std::string node_mix;
  std::string size_mix;
  int pods = 1000;
  uint64_t seed = 42;
  bool with_time = false;
  double mean_lifetime_s = 4 * 3600;
};

Result<Workload> GenerateSynthetic(const SyntheticSpec& spec);

}  // namespace topofit::bench
