#pragma once
// NodeGraph: one node's interconnect as a Boost.Graph, inferred from a TopoMatrix.
//
// Vertices are the devices (GPUs, NICs) and the fabric the matrix reveals between them: an NVSwitch
// fabric, PCIe switches (PIX groups), PCIe bridge complexes (PXB groups), host bridges (PHB groups)
// and NUMA nodes / CPU sockets (NODE groups, meshed by the SMP interconnect). Edges are typed and
// weighted with a per-direction bandwidth in GB/s. A PCIe edge into a fabric vertex carries the
// bandwidth of peer-to-peer traffic that has to climb up to that vertex, so the bottleneck of a path
// reproduces the matrix class of the pair: PIX > PXB > PHB > NODE > SYS, strictly.
//
// Derived facts: the effective bandwidth of every device pair is the widest (max-bottleneck) path in
// which no third device is a hop (GPUs and NICs do not forward peer-to-peer traffic).
//
// Contract: Build refuses matrices whose PCIe classes cannot come from one PCIe tree. Immutable after
// Build; safe for concurrent reads.

#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "base/status.h"
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

// Per-direction bandwidths (GB/s) of the model; see node_graph.cc for where each figure comes from.
struct BandwidthModel {
  int pcie_gen = 3;
  double nvlink_per_link = 25.0;
  double pix = 0, pxb = 0, phb = 0, node = 0, sys = 0;  // By the class of the path between devices.

  // The model for a PCIe generation (3, 4 or 5; others are clamped) and an NVLink per-link rate.
  static BandwidthModel For(int pcie_gen, double nvlink_per_link = 25.0);
  // Bandwidth of a pair of the given matrix class (NV uses the link count).
  double ForLink(LinkClass cls, int nvlinks) const;
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
  Vertex gpu_vertex(int gpu) const { return static_cast<Vertex>(gpu); }
  Vertex nic_vertex(int nic) const { return static_cast<Vertex>(gpus_ + nic); }
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
  void AddPcieTree(const TopoMatrix& matrix, const std::vector<std::vector<int>>& level_roots);
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
};

}  // namespace topofit
