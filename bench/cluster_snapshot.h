#pragma once
// The bench's simulated cluster as a snapshot `topofit serve --snapshot` loads (a kubectl-style List of
// Nodes, JSON): each node with its allocatable cpu, memory and nvidia.com/gpu, and its topology in the
// topofit.io/gpu-topology annotation exactly as the in-process topofit policy gives it to its model.
// A server started on it knows the same nodes the same way, which is what `--via-http` needs.
// Nodes only: the bench starts every run from an empty cluster.

#include <string>

#include "bench/sim_cluster.h"

namespace topofit::bench {

std::string ClusterSnapshotJson(const SimCluster& cluster);

}  // namespace topofit::bench
