#pragma once
// NodeGraph: one node's interconnect as a Boost.Graph, inferred from a TopoMatrix.
//
// Vertices are the devices (GPUs, NICs) and the fabric the matrix reveals between them: an NVSwitch
// fabric, PCIe switches (PIX groups), PCIe bridge complexes (PXB groups), host bridges (PHB groups)
// and NUMA nodes / CPU sockets (NODE groups, meshed by the SMP interconnect). Edges are typed and
// weighted with a per-direction bandwidth in GB/s (bandwidth_model.h). A PCIe edge into a fabric vertex
// carries the bandwidth of peer-to-peer traffic that has to climb up to that vertex, so the bottleneck
// of a path reproduces the matrix class of the pair: PIX > PXB > PHB > NODE > SYS, strictly.
//
// Derived facts: the effective bandwidth of every device pair is the widest (max-bottleneck) path in
// which no third device is a hop (GPUs and NICs do not forward peer-to-peer traffic).
//
// Matrices that are not one PCIe tree: the matrix is what the machine says, and real machines print
// matrices no single PCIe tree produces (an H100 whose GPU0 is SYS to a NIC that the rest of the matrix
// and NUMA Affinity put on GPU0's NUMA node; pcie_groups.h). Such a matrix is not refused: its PCIe part
// is modelled as given - one edge per device pair at the bandwidth of the pair's class, no PCIe fabric
// vertices - NVLink as always, and warnings() says which pair broke the tree. Every pair's bandwidth is
// then exactly its class's.
//
// Contract: Build accepts every matrix that meets the invariants of topo_matrix.h and never returns an
// Error for one; warnings() is empty exactly when the matrix is one PCIe tree. Immutable after Build;
// safe for concurrent reads.

#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "base/status.h"
#include "topology/bandwidth_model.h"
#include "topology/pcie_groups.h"
#include "topology/topo_matrix.h"

namespace topofit {

enum class VertexKind { kGpu, kNic, kNvSwitch, kPcieSwitch, kPcieBridge, kHostBridge, kNumaNode };
enum class EdgeKind { kNvLink, kPcie, kSmp };

std::string_view ToString(VertexKind kind);
std::string_view ToString(EdgeKind kind);

struct VertexInfo {
  VertexKind kind = VertexKind::kGpu;
  std::string name;         // "GPU0", "mlx5_0", "nvswitch", "pcie-switch0", "numa1"...
  int device = -1;          // GPU index for kGpu, NIC index for kNic, else -1.
  std::optional<int> numa;  // kNumaNode: the NUMA node number when NUMA Affinity tells it.
};

struct EdgeInfo {
  EdgeKind kind = EdgeKind::kPcie;
  double gbps = 0;  // Per direction.
  int nvlinks = 0;  // kNvLink: bonded links.
};

struct NodeGraphOptions {
  std::optional<int> pcie_gen;  // Unset: inferred from the NVLink generation (see InferPcieGen).
  double nvlink_per_link_gbps = 25.0;
};

class NodeGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexInfo, EdgeInfo>;
  using Vertex = Graph::vertex_descriptor;

  static Result<NodeGraph> Build(const TopoMatrix& matrix, const NodeGraphOptions& options = {});

  // PCIe generation guessed from the matrix: NV18 or more (H100/H200/B200 SXM) -> 5; NV4..NV17
  // (A100 NV12/NV4, RTX 3090 bridge NV4) -> 4; otherwise (NV1/NV2 boards of the P100/V100 era and
  // plain PCIe machines, where the matrix says nothing) -> 3, the pessimistic choice.
  static int InferPcieGen(const TopoMatrix& matrix);

  const Graph& graph() const { return graph_; }
  const BandwidthModel& model() const { return model_; }
  int gpu_count() const { return gpus_; }
  int nic_count() const { return nics_; }
  bool has_nvswitch() const { return has_nvswitch_; }
  // True when the matrix is not one PCIe tree and its PCIe pairs are modelled as given (see above).
  bool pcie_as_given() const { return !warnings_.empty(); }
  // One sentence per thing the model could not take as a PCIe tree, e.g. "the matrix is not one PCIe
  // tree: it says GPU0 and NIC3 are SYS, but its other entries put them at NODE ...". For the caller to
  // log or show; the model does not log.
  const std::vector<std::string>& warnings() const { return warnings_; }
  Vertex gpu_vertex(int gpu) const { return static_cast<Vertex>(gpu); }
  size_t CountVertices(VertexKind kind) const;

  // Effective per-direction bandwidth (widest path), 0 for a device with itself.
  double gpu_bandwidth_gbps(int a, int b) const { return bw_[Index(a, b)]; }
  double gpu_nic_bandwidth_gbps(int gpu, int nic) const { return bw_[Index(gpu, gpus_ + nic)]; }
  // NUMA node of the GPU: NUMA Affinity when the matrix has it, else nullopt.
  std::optional<int> numa_node(int gpu) const { return numa_[gpu]; }
  // The NICs of the best class to this GPU (e.g. the two PXB NICs of a DGX A100 GPU), ordered by
  // bandwidth then index; empty when the node has no NIC.
  const std::vector<int>& nearest_nics(int gpu) const { return nearest_[gpu]; }

  // One line per vertex with its edges, for `topofit topo`.
  std::string Describe() const;

 private:
  size_t Index(int a, int b) const { return static_cast<size_t>(a) * (gpus_ + nics_) + b; }
  void AddDevices(const TopoMatrix& matrix);
  void AddPcieTree(const TopoMatrix& matrix, const PcieGroups& groups);
  void AddPcieAsGiven(const TopoMatrix& matrix);
  void AddNvLinks(const TopoMatrix& matrix);
  void ComputeBandwidths();
  void ComputeNearestNics(const TopoMatrix& matrix);

  Graph graph_;
  BandwidthModel model_;
  int gpus_ = 0;
  int nics_ = 0;
  bool has_nvswitch_ = false;
  std::vector<double> bw_;  // (gpus+nics)^2, devices indexed GPUs first then NICs.
  std::vector<std::optional<int>> numa_;
  std::vector<std::vector<int>> nearest_;
  std::vector<std::string> warnings_;
};

}  // namespace topofit
