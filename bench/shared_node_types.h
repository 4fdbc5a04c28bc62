#pragma once
// The bench's nodes whose GPUs are shared (time-slicing, MPS, MIG single strategy), resolved by the
// extender's own TopologyResolver from the GFD labels they carry, so that a bench run sees each such node
// as `topofit serve` would: the devices' topology, the physical GPUs' topology and which device is on
// which GPU (extender/cluster/shared_devices.h). Also the shapes the synthetic generator names them by.
//
// Sharing shapes, as the NVIDIA device plugin offers them (docs/shared-gpus.md):
//   "ts<R>"        time-slicing, R replicas per GPU (GFD: gpu.sharing-strategy=time-slicing,
//                  gpu.replicas=R, gpu.count = the physical GPUs, product "<model>-SHARED");
//   "mps<R>"       the same with MPS;
//   "mig-<prof>"   MIG single strategy, every GPU split into devices of profile <prof> ("1g.10gb",
//                  "3g.40gb"; GFD: mig.strategy=single, product "<model>-MIG-<prof>", gpu.count = the
//                  MIG devices).
// Errors: an unknown shape, labels the resolver does not read as sharing, or any warning of the
// resolver (labels that disagree with the device count): a bench cluster is built as described or not
// at all. Thread-safe (no state).

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/gpu_models.h"
#include "bench/sim_cluster.h"
#include "bench/workload.h"
#include "extender/cluster/topology_resolver.h"
#include "topology/topology.h"

namespace topofit::bench {

// Makes `node` (its `gpus` physical GPUs, its `model`) a node of `shape`: sets its GFD labels and its
// `gpus` to the devices it advertises. Error: an unknown shape.
Status ApplySharingShape(const std::string& shape, NodeSpec& node);

// `spec` "MODEL@SHAPE,..." (e.g. "T4@ts4,G2@ts2"): every node of MODEL with GPUs gets its physical GPUs'
// topology from `map` and then SHAPE (ApplySharingShape). "" changes nothing. Errors: an entry without
// '@', a model no node has, a bad shape, a model `map` cannot place.
Status ShareModels(const std::string& spec, const GpuModelMap& map, std::vector<NodeSpec>& nodes);

// The NodeType of a node as the resolver resolved it (`r`): its devices' topology, its physical GPUs',
// its sharing, its usable device count; `model` and `annotation` as the caller names them. Its id and
// topology_spec are left to the caller.
NodeType NodeTypeOf(const cluster::ResolvedTopology& r, std::string model, std::string annotation);

// The NodeType of a node with GFD sharing labels whose physical GPUs are described by `annotation` (what
// its topofit.io/gpu-topology annotation carries: a profile name or topo -m text), through
// cluster::TopologyResolver. Its id and topology_spec are left to the caller.
Result<NodeType> ResolveSharedNodeType(const NodeSpec& node, const std::string& annotation,
                                       TopologyRegistry& registry);

}  // namespace topofit::bench
