#include "topology/node_graph.h"

#include <doctest/doctest.h>


#include "topology/fixture_test_util.h"
#include "topology/topo_parser.h"

namespace topofit {
namespace {

TopoMatrix Fixture(const std::string& name) { return testing::ParseTopoFixture(name); }

TopoMatrix Parse(const std::string& text) {
  Result<TopoMatrix> m = ParseTopoMatrix(text);
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error()));
  return *m;
}

NodeGraph BuildOk(const TopoMatrix& m, const NodeGraphOptions& options = {}) {
  Result<NodeGraph> g = NodeGraph::Build(m, options);
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error()));
  return std::move(g).value();
}

size_t CountEdges(const NodeGraph& g, EdgeKind kind) {
  size_t n = 0;
  for (auto [e, end] = boost::edges(g.graph()); e != end; ++e) n += g.graph()[*e].kind == kind;
  return n;
}

// One pair of every PCIe class from GPU0: GPU1 PIX, GPU2 PXB, GPU3 PHB, GPU4 NODE, GPU5 SYS.
const char kEveryClass[] =
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    NUMA Affinity\n"
    "GPU0     X      PIX     PXB     PHB     NODE    SYS     0\n"
    "GPU1    PIX      X      PXB     PHB     NODE    SYS     0\n"
    "GPU2    PXB     PXB      X      PHB     NODE    SYS     0\n"
    "GPU3    PHB     PHB     PHB      X      NODE    SYS     0\n"
    "GPU4    NODE    NODE    NODE    NODE     X      SYS     0\n"
    "GPU5    SYS     SYS     SYS     SYS     SYS      X      1\n";

TEST_CASE("bandwidth constants follow the published figures") {
  BandwidthModel gen3 = BandwidthModel::For(3);
  CHECK(gen3.pix >= 10.0);  // Fixtures README: PCIe gen3 x16 about 10-16 GB/s effective.
  CHECK(gen3.pix <= 16.0);
  CHECK(BandwidthModel::For(4).pix == doctest::Approx(2 * gen3.pix));
  CHECK(BandwidthModel::For(5).pix == doctest::Approx(4 * gen3.pix));
  CHECK(gen3.ForLink(LinkClass::Nv, 1) == doctest::Approx(25.0));   // V100 NV1
  CHECK(gen3.ForLink(LinkClass::Nv, 2) == doctest::Approx(50.0));   // V100 NV2
  CHECK(gen3.ForLink(LinkClass::Nv, 12) == doctest::Approx(300.0)); // A100 NVSwitch
  CHECK(gen3.ForLink(LinkClass::Nv, 18) == doctest::Approx(450.0)); // H100 NVSwitch
}

TEST_CASE("PCIe classes come out strictly ordered PIX > PXB > PHB > NODE > SYS on every generation") {
  TopoMatrix m = Parse(kEveryClass);
  for (int gen : {3, 4, 5}) {
    CAPTURE(gen);
    NodeGraphOptions options;
    options.pcie_gen = gen;
    NodeGraph g = BuildOk(m, options);
    const BandwidthModel& b = g.model();
    CHECK(g.gpu_bandwidth_gbps(0, 1) == doctest::Approx(b.pix));
    CHECK(g.gpu_bandwidth_gbps(0, 2) == doctest::Approx(b.pxb));
    CHECK(g.gpu_bandwidth_gbps(0, 3) == doctest::Approx(b.phb));
    CHECK(g.gpu_bandwidth_gbps(0, 4) == doctest::Approx(b.node));
    CHECK(g.gpu_bandwidth_gbps(0, 5) == doctest::Approx(b.sys));
    CHECK(b.pix > b.pxb);
    CHECK(b.pxb > b.phb);
    CHECK(b.phb > b.node);
    CHECK(b.node > b.sys);
    CHECK(b.sys * 2 <= b.node);  // Cross-socket P2P is much slower.
    CHECK(g.gpu_bandwidth_gbps(5, 0) == g.gpu_bandwidth_gbps(0, 5));
  }
  NodeGraph g = BuildOk(m);
  CHECK(g.model().pcie_gen == 3);  // No NVLink: the pessimistic default.
  CHECK(g.CountVertices(VertexKind::kPcieSwitch) == 1);
  CHECK(g.CountVertices(VertexKind::kPcieBridge) == 1);
  CHECK(g.CountVertices(VertexKind::kHostBridge) == 1);
  CHECK(g.CountVertices(VertexKind::kNumaNode) == 2);
  CHECK(CountEdges(g, EdgeKind::kSmp) == 1);
  CHECK(g.numa_node(5) == 1);
}

TEST_CASE("DGX-1 V100: NVLink edges per GPU pair, a PCIe switch with the NIC, two sockets") {
  NodeGraph g = BuildOk(Fixture("dgx1-v100-hybrid-cube-mesh.txt"));
  CHECK_FALSE(g.has_nvswitch());
  CHECK(g.model().pcie_gen == 3);
  CHECK(CountEdges(g, EdgeKind::kNvLink) == 16);  // 8 GPUs x 4 peers / 2.
  CHECK(g.CountVertices(VertexKind::kPcieSwitch) == 1);
  CHECK(g.CountVertices(VertexKind::kNumaNode) == 2);  // From CPU Affinity: the matrix has no NUMA column.
  CHECK(g.gpu_bandwidth_gbps(0, 3) == doctest::Approx(50.0));
  CHECK(g.gpu_bandwidth_gbps(0, 1) == doctest::Approx(25.0));
  // GPU0-GPU5 is SYS: the two-hop NVLink route through GPU4 does not count, GPUs do not forward.
  CHECK(g.gpu_bandwidth_gbps(0, 5) == doctest::Approx(g.model().sys));
  CHECK(g.gpu_nic_bandwidth_gbps(2, 0) == doctest::Approx(g.model().pix));
  CHECK(g.gpu_nic_bandwidth_gbps(0, 0) == doctest::Approx(g.model().node));
  CHECK(g.gpu_nic_bandwidth_gbps(4, 0) == doctest::Approx(g.model().sys));
  CHECK(g.nearest_nics(2) == std::vector<int>{0});
  CHECK_FALSE(g.numa_node(0).has_value());
}

TEST_CASE("NVSwitch boards get one NVSwitch vertex, NV12 pairs run at 300 GB/s") {
  NodeGraph p4d = BuildOk(Fixture("p4d-24xlarge.txt"));
  CHECK(p4d.has_nvswitch());
  CHECK(p4d.model().pcie_gen == 4);
  CHECK(p4d.CountVertices(VertexKind::kNvSwitch) == 1);
  CHECK(CountEdges(p4d, EdgeKind::kNvLink) == 8);
  CHECK(p4d.gpu_bandwidth_gbps(0, 7) == doctest::Approx(300.0));
  CHECK(p4d.CountVertices(VertexKind::kNumaNode) == 2);
  CHECK(p4d.numa_node(4) == 1);

  NodeGraph dgx = BuildOk(Fixture("dgx-a100-10nic.txt"));
  CHECK(dgx.has_nvswitch());
  CHECK(dgx.CountVertices(VertexKind::kPcieBridge) == 4);  // A switch complex per GPU pair and NIC pair.
  CHECK(dgx.CountVertices(VertexKind::kPcieSwitch) == 1);  // NIC8 and NIC9 (PIX).
  CHECK(dgx.CountVertices(VertexKind::kNumaNode) == 5);    // NUMA 3, 1, 7, 5 and the storage NICs'.
  CHECK(dgx.nearest_nics(0) == std::vector<int>{0, 1});
  CHECK(dgx.nearest_nics(5) == std::vector<int>{4, 5});
  CHECK(dgx.gpu_nic_bandwidth_gbps(0, 1) == doctest::Approx(dgx.model().pxb));
  CHECK(dgx.gpu_nic_bandwidth_gbps(0, 9) == doctest::Approx(dgx.model().sys));
  CHECK(dgx.Describe().find("nvswitch (NVSwitch)") != std::string::npos);
}

TEST_CASE("two GPUs at NV12 are a bridge, not an NVSwitch, mixed counts are not a switch either") {
  NodeGraph pair = BuildOk(Parse("        GPU0    GPU1\nGPU0     X      NV12\nGPU1    NV12     X\n"));
  CHECK_FALSE(pair.has_nvswitch());
  CHECK(CountEdges(pair, EdgeKind::kNvLink) == 1);
  CHECK(pair.gpu_bandwidth_gbps(0, 1) == doctest::Approx(300.0));
  NodeGraph mixed = BuildOk(Parse("        GPU0    GPU1    GPU2\nGPU0     X      NV12    NV12\n"
                                  "GPU1    NV12     X      NV18\nGPU2    NV12    NV18     X\n"));
  CHECK_FALSE(mixed.has_nvswitch());
  CHECK(mixed.model().pcie_gen == 5);
  // Four GPUs at NV6 use 18 links each, as many as an H100 has: direct (HGX H100 4-GPU). At NV8 they
  // would need 24: a switch (A800 and H800 boards print NV8).
  auto all_pairs = [](const std::string& nv) {
    std::string text = "        GPU0    GPU1    GPU2    GPU3\n";
    for (int a = 0; a < 4; ++a) {
      text += "GPU" + std::to_string(a);
      for (int b = 0; b < 4; ++b) text += a == b ? "     X  " : "    " + nv;
      text += "\n";
    }
    return text;
  };
  CHECK_FALSE(BuildOk(Parse(all_pairs("NV6"))).has_nvswitch());
  NodeGraph nv8 = BuildOk(Parse(all_pairs("NV8")));
  CHECK(nv8.has_nvswitch());
  CHECK(nv8.gpu_bandwidth_gbps(0, 3) == doctest::Approx(200.0));
}

TEST_CASE("PCIe-only fixtures: NODE within a socket, SYS across, a NIC on a third NUMA node") {
  NodeGraph g = BuildOk(Fixture("l40s-8-pcie-dual-socket.txt"));
  CHECK(g.gpu_bandwidth_gbps(0, 3) == doctest::Approx(g.model().node));
  CHECK(g.gpu_bandwidth_gbps(3, 4) == doctest::Approx(g.model().sys));
  CHECK(g.CountVertices(VertexKind::kNumaNode) == 3);
  CHECK(g.nearest_nics(6) == std::vector<int>{0});
  NodeGraph ws = BuildOk(Fixture("rtx5090-2-phb.txt"));
  CHECK(ws.gpu_bandwidth_gbps(0, 1) == doctest::Approx(ws.model().phb));
  CHECK(ws.nearest_nics(0).empty());
}

TEST_CASE("a matrix that is not one PCIe tree is modelled as given, with a warning") {
  // Synthetic: GPU0 and GPU2 each share a switch with GPU1, yet the matrix puts them at PXB.
  TopoMatrix m = Parse(
      "        GPU0    GPU1    GPU2\n"
      "GPU0     X      PIX     PXB\n"
      "GPU1    PIX      X      PIX\n"
      "GPU2    PXB     PIX      X\n");
  NodeGraph g = BuildOk(m);
  CHECK(g.pcie_as_given());
  REQUIRE(g.warnings().size() == 1);
  CHECK(g.warnings()[0] ==
        "the matrix is not one PCIe tree: it says GPU0 and GPU2 are PXB, but its other entries put them at PIX; "
        "each device pair is modelled at the bandwidth of the class the matrix gives it");
  // Every pair at its own class: no fabric vertex, one edge per pair.
  CHECK(g.gpu_bandwidth_gbps(0, 1) == doctest::Approx(g.model().pix));
  CHECK(g.gpu_bandwidth_gbps(1, 2) == doctest::Approx(g.model().pix));
  CHECK(g.gpu_bandwidth_gbps(0, 2) == doctest::Approx(g.model().pxb));
  CHECK(g.CountVertices(VertexKind::kPcieSwitch) == 0);
  CHECK(g.CountVertices(VertexKind::kNumaNode) == 0);
  CHECK(CountEdges(g, EdgeKind::kPcie) == 3);
  CHECK(g.Describe().find("PCIe as given pair by pair (not one PCIe tree)") != std::string::npos);
  // One PCIe tree: no warning.
  CHECK(BuildOk(Parse(kEveryClass)).warnings().empty());
  CHECK_FALSE(BuildOk(Parse(kEveryClass)).pcie_as_given());
}

TEST_CASE("SYS between a GPU and a NIC that NUMA Affinity puts on the GPU's node: modelled as given, the warning says why") {
  // Synthetic, in the shape real H100 boxes print: GPU0 and GPU1 share NUMA node 0 and NVLink, each has
  // its PXB NIC, and the matrix says SYS from each GPU to the other's NIC.
  TopoMatrix m = Parse(
      "        GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NV18    PXB     SYS     0-55            0\n"
      "GPU1    NV18     X      SYS     PXB     0-55            0\n"
      "NIC0    PXB     SYS      X      SYS\n"
      "NIC1    SYS     PXB     SYS      X\n");
  NodeGraph g = BuildOk(m);
  REQUIRE(g.warnings().size() == 1);
  CHECK(g.warnings()[0] ==
        "the matrix is not one PCIe tree: it says GPU0 and NIC1 are SYS, but its other entries and the NUMA Affinity "
        "of its NVLink GPUs put them at NODE (3 pairs disagree so); each device pair is modelled at the bandwidth of "
        "the class the matrix gives it");
  CHECK(g.model().pcie_gen == 5);
  CHECK(g.gpu_bandwidth_gbps(0, 1) == doctest::Approx(450.0));  // NVLink kept.
  CHECK(g.gpu_nic_bandwidth_gbps(0, 0) == doctest::Approx(g.model().pxb));
  CHECK(g.gpu_nic_bandwidth_gbps(0, 1) == doctest::Approx(g.model().sys));  // The machine's word.
  CHECK(g.nearest_nics(0) == std::vector<int>{0});
  CHECK(g.nearest_nics(1) == std::vector<int>{1});
  CHECK(g.numa_node(1) == 0);
}

TEST_CASE("any NVLink pair is faster than any PCIe pair on every fixture") {
  for (const char* name : {"dgx1-v100-hybrid-cube-mesh.txt", "p4d-24xlarge.txt", "dgx-a100-10nic.txt"}) {
    CAPTURE(std::string(name));
    TopoMatrix m = Fixture(name);
    NodeGraph g = BuildOk(m);
    double slowest_nv = 1e9, fastest_pcie = 0;
    for (int a = 0; a < m.gpu_count(); ++a) {
      for (int b = a + 1; b < m.gpu_count(); ++b) {
        double bw = g.gpu_bandwidth_gbps(a, b);
        if (m.gpu_links[a][b].cls == LinkClass::Nv) slowest_nv = std::min(slowest_nv, bw);
        else fastest_pcie = std::max(fastest_pcie, bw);
      }
    }
    CHECK(slowest_nv > g.model().pix);
    CHECK(slowest_nv > fastest_pcie);
  }
}

}  // namespace
}  // namespace topofit
