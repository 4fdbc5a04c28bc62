#pragma once
// DraMatrix: the interconnect a DRA node's devices say themselves, for a node no other topology
// source describes (topology_resolver.h, source "dra-attributes"). DRA drivers publish where each GPU
// sits on the host, not how GPUs link to each other, so there is no NVLink here:
//   same resource.kubernetes.io/pcieRoot      PHB (under one PCIe root complex; a shared switch is
//                                             not promised, so not PIX/PXB)
//   else same NUMA node (numa attribute)      NODE
//   else both NUMA nodes known and different  SYS
//   else                                      NODE (as generic-pcie-N: unknown, yet not cross-socket)
// NUMA affinity per GPU from the numa attribute when known. Pure function; thread-safe.

#include "extender/cluster/dra_gpus.h"
#include "topology/topo_matrix.h"

namespace topofit::cluster {

TopoMatrix DraMatrix(const DraNodeGpus& gpus);

}  // namespace topofit::cluster
