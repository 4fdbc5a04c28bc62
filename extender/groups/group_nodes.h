#pragma once
// GroupNodes: the GPUs of every node of a DomainMap as the cluster model has them at one moment - the
// state a group plan is made on (group_planner.h), read through ClusterModel::Reader.
//
// Aligned with the DomainMap: nodes[i] is domains.name(i). A node the model does not know (deleted
// since the map was built), or one without GPUs, has no topology and no free GPUs: it can take no
// member. Free GPUs are what the model counts free now (reservations in flight count as held).
// A copy: planning on it never blocks the model, and Take() lets a caller (the bench) play a plan
// forward without writing to the model.

#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/groups/network_domains.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::groups {

struct GroupNode {
  const Topology* topology = nullptr;  // Interned by the model's registry, which never drops one.
  GpuSet usable;
  GpuSet free;
  bool whole_free() const { return topology && !usable.empty() && free == usable; }
};

struct GroupNodes {
  const DomainMap* domains = nullptr;  // Must outlive this.
  std::vector<GroupNode> nodes;
};

GroupNodes ReadGroupNodes(const cluster::ClusterModel& model, const DomainMap& domains);
// The same through a Reader the caller holds (the model's lock is not taken again).
GroupNodes ReadGroupNodes(const cluster::ClusterModel::Reader& reader, const DomainMap& domains);

}  // namespace topofit::groups
