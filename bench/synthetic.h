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
// Families (`family`, `topofit bench synthetic --family F`) stress what fragmentation depends on, on a
// heterogeneous cluster (kHeterogeneousNodeMix: NVLink and PCIe 8-GPU nodes, 4- and 2-GPU nodes; CPU per
// GPU 12 cores on 8-GPU nodes, 16 on 4-GPU, 24 on smaller, memory 48 GiB per GPU):
//   gpu-model   sizes 1:70,2:10,4:10,8:10; 40% of GPU pods may run only on one GPU model (a third of
//               those on either of two), drawn in proportion to the GPUs of each model that has nodes
//               with enough GPUs for the pod.
//   multi-gpu   sizes 1:40,2:20,4:20,8:20.
//   cpu-heavy   sizes 0:25,1:60,2:5,4:5,8:5; 8-32 cores per GPU (CPU-only pods: 8-32 cores), above
//               the nodes' share, so CPU runs out before GPUs.
//   shared      a cluster where some nodes share their GPUs (kSharedNodeMix: HGX A100 and PCIe 8-GPU
//               nodes, whole, time-sliced 4 and 2 ways, MIG 1g.10gb and 3g.40gb); sizes 1:60,2:15,4:15,8:10
//               devices, 1-2 cores and 4-8 GiB per device (a MIG 1g.10gb node fills before its CPU
//               does), a quarter of the pods annotated topofit.io/replica-placement: packed.
// A node mix entry "<profile>@<shape>" shares the profile's GPUs as <shape> says (shared_node_types.h:
// ts<R>, mps<R>, mig-<g>g.<mem>gb); its count of GPUs, CPU and memory are the physical GPUs'.
// A node or size mix given explicitly replaces the family's. Same seed, same workload.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/workload.h"

namespace topofit::bench {

inline constexpr const char* kHeterogeneousNodeMix =
    "dgx1-v100:12,hgx-a100-8:8,pcie-8-dual-socket:40,pcie-4-single-socket:16,phb-2-workstation:64";

// Whole, time-sliced and MIG nodes of one cluster (the family "shared"): 800 devices on 384 GPUs.
inline constexpr const char* kSharedNodeMix =
    "hgx-a100-8:8,hgx-a100-8@ts4:8,hgx-a100-8@mig-1g.10gb:4,hgx-a100-8@mig-3g.40gb:4,"
    "pcie-8-dual-socket:8,pcie-8-dual-socket@ts2:8";

struct SyntheticSpec {
  std::string node_mix;   // "" = the family's.
  std::string size_mix;   // "" = the family's.
  int pods = 1000;
  uint64_t seed = 42;
  bool with_time = false;
  double mean_lifetime_s = 4 * 3600;
  std::string family;     // "" (the plain mix), gpu-model, multi-gpu, cpu-heavy, shared.
};

// The family names, for --help and errors.
const std::vector<std::string>& SyntheticFamilies();

Result<Workload> GenerateSynthetic(const SyntheticSpec& spec);

}  // namespace topofit::bench
