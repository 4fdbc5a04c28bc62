#pragma once
// Topology: the immutable model of one node's GPU interconnect.
//
// Built from a TopoMatrix (parsed text or a built-in profile). It holds a Boost.Graph of the node
// (GPUs, NVSwitch fabrics, PCIe switches and bridges, host bridges, CPU sockets / NUMA nodes, NICs;
// edges typed and weighted in GB/s, see node_graph.h), and what is derived from it: for every GPU
// pair the link class and effective bandwidth, each GPU's NUMA node and nearest NICs, and the
// SetSelector that answers best-set queries.
//
// Every matrix that meets the invariants of topo_matrix.h is modelled, including real ones that are not
// one PCIe tree (node_graph.h); warnings() then says what the model took as given. Those are the model's
// warnings, a function of the fingerprint; what the parser took on trust about the text stays in the
// caller's TopoMatrix::warnings. The library never logs either: callers log or show them.
//
// Ownership: always held by shared_ptr<const Topology>. Many nodes of one machine type share one
// instance through TopologyRegistry (interning), so per-topology tables and caches are paid once.
// Thread-safe for concurrent reads.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "topology/gpu_set.h"
#include "topology/link_class.h"
#include "topology/pair_matrix.h"
#include "topology/set_selector.h"
#include "topology/topo_matrix.h"

namespace topofit {

class NodeGraph;

class Topology {
 public:
  // Validates and models the matrix. Fails (with a clear message) only on matrices that cannot describe
  // a real node: more than GpuSet::kMaxGpus GPUs, an asymmetric matrix, X off the diagonal, NVLink to a
  // NIC, per-GPU columns of the wrong length. Not one PCIe tree is not a failure (see warnings()).
  static Result<std::shared_ptr<const Topology>> Build(TopoMatrix matrix);
  ~Topology();

  int gpu_count() const;
  int nic_count() const;
  const TopoMatrix& matrix() const;
  const NodeGraph& graph() const;
  const PairMatrix& pairs() const;
  const SetSelector& selector() const;

  Link link(int a, int b) const;
  double bandwidth_gbps(int a, int b) const;      // Effective per-direction P2P bandwidth.
  std::optional<int> numa_node(int gpu) const;     // nullopt when the matrix does not tell.
  std::vector<int> nearest_nics(int gpu) const;    // Indices into matrix().nic_names, best first.
  // One sentence per thing the model took as given (NodeGraph::warnings); empty when the matrix is one
  // PCIe tree.
  const std::vector<std::string>& warnings() const;

  // Canonical text of everything that affects placement; equal fingerprints mean interchangeable
  // topologies. Used as the interning key.
  const std::string& fingerprint() const;

 private:
  Topology();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// TopologyRegistry: interns topologies by fingerprint so that 5,000 nodes of three machine types hold
// three Topology objects. Thread-safe.
class TopologyRegistry {
 public:
  Result<std::shared_ptr<const Topology>> Intern(TopoMatrix matrix);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const Topology>> by_fingerprint_;
};

}  // namespace topofit
