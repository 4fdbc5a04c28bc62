// The model on real `nvidia-smi topo -m` outputs of current machines under topology/testdata/topo
// (SOURCES.md says where each was published): what the parser reads cell by cell, and what Topology
// makes of it - NUMA nodes, nearest NICs, NVSwitch, pair bandwidths and the best GPU sets.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topology/fixture_test_util.h"
#include "topology/node_graph.h"
#include "topology/topology.h"

namespace topofit {
namespace {

using testing::Cell;
using testing::ParseOk;
using testing::ReadRepoTopoFixture;

std::shared_ptr<const Topology> BuildFixture(const std::string& name, TopoMatrix* matrix = nullptr) {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture(name));
  if (matrix) *matrix = m;
  auto t = Topology::Build(std::move(m));
  REQUIRE_MESSAGE(t.ok(), name << ": " << (t.ok() ? "" : t.error()));
  return *t;
}

// The best k-set of the free GPUs as "0,1,2" and its ring bandwidth in GB/s; "" when none.
struct Best {
  std::string gpus;
  double gbps = 0;
};
Best BestSet(const Topology& t, GpuSet free, int k) {
  std::optional<SetChoice> c = t.selector().Best(free, k);
  return c ? Best{c->gpus.ToString(), c->bandwidth_gbps()} : Best{};
}

TEST_CASE("GB200 (4 GPUs, Grace): NUMA Affinity lists of several nodes, every NIC SYS, one NVSwitch fabric") {
  TopoMatrix m;
  auto t = BuildFixture("gb200-4-nv18-8nic-numa-lists.txt", &m);
  REQUIRE(m.gpu_count() == 4);
  REQUIRE(m.nic_count() == 8);
  CHECK(m.gpu_links[0][3] == Link{LinkClass::Nv, 18});
  for (int g = 0; g < 4; ++g) {
    for (int n = 0; n < 8; ++n) CHECK(Cell(m.gpu_nic, g, n) == "SYS");
  }
  CHECK(Cell(m.nic_links, 2, 3) == "PIX");
  CHECK(Cell(m.nic_links, 6, 7) == "PIX");
  CHECK(Cell(m.nic_links, 3, 4) == "SYS");
  CHECK(m.numa_affinity_list[1] == "0,2-17");
  CHECK(m.numa_affinity_list[2] == "1,18-33");
  CHECK(m.cpu_affinity[3] == "72-143");
  CHECK(m.nic_legend.at("NIC7") == "mlx5_7");
  // Several NUMA nodes per GPU: the model does not pick one.
  CHECK_FALSE(t->numa_node(0).has_value());
  CHECK(t->graph().has_nvswitch());
  CHECK(t->graph().model().pcie_gen == 5);
  CHECK(t->bandwidth_gbps(0, 3) == doctest::Approx(450.0));
  CHECK(t->graph().gpu_nic_bandwidth_gbps(0, 2) == doctest::Approx(t->graph().model().sys));
  // No NIC is closer than SYS to any GPU, so all eight are equally near.
  CHECK(t->nearest_nics(2) == (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  CHECK(t->warnings().empty());
  Best two = BestSet(*t, GpuSet::FirstN(4), 2);
  CHECK(two.gpus == "0,1");
  CHECK(two.gbps == doctest::Approx(450.0));
  CHECK(BestSet(*t, GpuSet::FirstN(4), 4).gpus == "0,1,2,3");
}

TEST_CASE("2 of an 8-GPU NV18 board with 10 NICs, pasted with misaligned columns: read by whitespace") {
  TopoMatrix m;
  auto t = BuildFixture("nv18-2of8-10nic-misaligned.txt", &m);
  REQUIRE(m.gpu_count() == 2);
  REQUIRE(m.nic_count() == 10);
  CHECK(m.gpu_links[0][1] == Link{LinkClass::Nv, 18});
  CHECK(Cell(m.gpu_nic, 0, 0) == "NODE");
  CHECK(Cell(m.gpu_nic, 0, 5) == "PIX");
  CHECK(Cell(m.gpu_nic, 0, 6) == "SYS");
  CHECK(Cell(m.gpu_nic, 1, 6) == "PIX");
  CHECK(Cell(m.gpu_nic, 1, 9) == "NODE");
  CHECK(Cell(m.nic_links, 0, 1) == "PIX");
  CHECK(Cell(m.nic_links, 7, 8) == "NODE");  // The NIC8 row whose X is not padded.
  CHECK(Cell(m.nic_links, 8, 8) == "X");
  CHECK(Cell(m.nic_links, 5, 6) == "SYS");
  CHECK(m.cpu_affinity[1] == "48-95,144-191");
  CHECK(m.nic_legend.at("NIC9") == "mlx5_9");
  CHECK(t->numa_node(0) == 0);
  CHECK(t->numa_node(1) == 1);
  CHECK(t->nearest_nics(0) == std::vector<int>{5});
  CHECK(t->nearest_nics(1) == std::vector<int>{6});
  CHECK_FALSE(t->graph().has_nvswitch());  // Two visible GPUs: the pair's own links.
  CHECK(t->bandwidth_gbps(0, 1) == doctest::Approx(450.0));
  CHECK(t->warnings().empty());
  CHECK(BestSet(*t, GpuSet::FirstN(2), 2).gpus == "0,1");
}

TEST_CASE("8x H800 in a KVM guest: NV8 on every pair is an NVSwitch fabric, a PIX NIC per GPU, PHB within a socket") {
  TopoMatrix m;
  auto t = BuildFixture("h800-8-nv8-11nic-kvm.txt", &m);
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 11);
  CHECK(m.gpu_links[2][5] == Link{LinkClass::Nv, 8});
  for (int g = 0; g < 8; ++g) {
    CAPTURE(g);
    CHECK(Cell(m.gpu_nic, g, g + 1) == "PIX");
    CHECK(Cell(m.gpu_nic, g, 0) == "SYS");  // NIC0 is SYS to everything.
    CHECK(t->nearest_nics(g) == std::vector<int>{g + 1});
    CHECK(t->numa_node(g) == (g < 4 ? 0 : 1));
  }
  CHECK(Cell(m.gpu_nic, 0, 2) == "PHB");
  CHECK(Cell(m.gpu_nic, 4, 4) == "SYS");
  CHECK(Cell(m.nic_links, 9, 10) == "PHB");
  CHECK(Cell(m.nic_links, 8, 9) == "SYS");
  CHECK(m.cpu_affinity[7] == "90-179");
  CHECK(m.nic_legend.at("NIC10") == "mlx5_10");
  const NodeGraph& g = t->graph();
  CHECK(g.has_nvswitch());
  CHECK(g.model().pcie_gen == 4);  // NV8 says nothing of PCIe gen5: the inference stays at gen4.
  CHECK(t->bandwidth_gbps(0, 7) == doctest::Approx(200.0));
  CHECK(g.gpu_nic_bandwidth_gbps(1, 1) == doctest::Approx(g.model().phb));
  CHECK(t->warnings().empty());
  const GpuSet all = GpuSet::FirstN(8);
  CHECK(BestSet(*t, all, 2).gpus == "0,1");
  CHECK(BestSet(*t, all, 4).gpus == "0,1,2,3");
  Best eight = BestSet(*t, all, 8);
  CHECK(eight.gpus == "0,1,2,3,4,5,6,7");
  CHECK(eight.gbps == doctest::Approx(200.0));
  CHECK(BestSet(*t, all - GpuSet::Of({0, 1}), 4).gpus == "2,3,4,5");
}

TEST_CASE("8-GPU NV18 board with 12 NICs: three PIX NICs behind GPU0 and GPU4, CPU Affinity a cpuset") {
  TopoMatrix m;
  auto t = BuildFixture("hgx-nv18-8-12nic-cpuset.txt", &m);
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 12);
  CHECK(Cell(m.gpu_nic, 0, 0) == "PIX");
  CHECK(Cell(m.gpu_nic, 0, 2) == "PIX");
  CHECK(Cell(m.gpu_nic, 0, 3) == "NODE");
  CHECK(Cell(m.gpu_nic, 0, 6) == "SYS");
  CHECK(Cell(m.gpu_nic, 7, 11) == "PIX");
  CHECK(Cell(m.nic_links, 0, 1) == "PIX");
  CHECK(Cell(m.nic_links, 0, 3) == "NODE");
  CHECK(Cell(m.nic_links, 5, 6) == "SYS");
  CHECK(m.cpu_affinity[0] == "4,6,8,10,12");
  CHECK(m.cpu_affinity[4] == "1,3,5,7,9,11");
  CHECK(t->numa_node(3) == 0);
  CHECK(t->numa_node(4) == 1);
  CHECK(t->nearest_nics(0) == (std::vector<int>{0, 1, 2}));
  CHECK(t->nearest_nics(4) == (std::vector<int>{6, 7, 8}));
  CHECK(t->nearest_nics(5) == std::vector<int>{9});
  CHECK(t->graph().has_nvswitch());
  CHECK(t->graph().gpu_nic_bandwidth_gbps(0, 1) == doctest::Approx(t->graph().model().pix));
  CHECK(t->warnings().empty());
  const GpuSet all = GpuSet::FirstN(8);
  Best two = BestSet(*t, all, 2);
  CHECK(two.gpus == "0,1");
  CHECK(two.gbps == doctest::Approx(450.0));
  CHECK(BestSet(*t, all, 4).gpus == "0,1,2,3");
  CHECK(BestSet(*t, all, 8).gbps == doctest::Approx(450.0));
}

TEST_CASE("3 GPUs, two joined by NV4, the third on the NICs' host bridge: the NVLink pair is the best 2-set") {
  TopoMatrix m;
  auto t = BuildFixture("3gpu-nv4-pair-2nic.txt", &m);
  REQUIRE(m.gpu_count() == 3);
  REQUIRE(m.nic_count() == 2);
  CHECK(m.gpu_links[0][1] == Link{LinkClass::Nv, 4});
  CHECK(Cell(m.gpu_links, 0, 2) == "NODE");
  CHECK(Cell(m.gpu_nic, 2, 0) == "PHB");
  CHECK(Cell(m.gpu_nic, 1, 1) == "NODE");
  CHECK(Cell(m.nic_links, 0, 1) == "PIX");
  CHECK(m.nic_legend.at("NIC1") == "mlx5_1");
  for (int g = 0; g < 3; ++g) CHECK(t->numa_node(g) == 1);
  CHECK(t->nearest_nics(0) == (std::vector<int>{0, 1}));
  CHECK(t->nearest_nics(2) == (std::vector<int>{0, 1}));
  CHECK(t->graph().gpu_nic_bandwidth_gbps(2, 0) > t->graph().gpu_nic_bandwidth_gbps(0, 0));
  CHECK_FALSE(t->graph().has_nvswitch());
  CHECK(t->graph().model().pcie_gen == 4);
  CHECK(t->bandwidth_gbps(0, 1) == doctest::Approx(100.0));
  CHECK(t->bandwidth_gbps(0, 2) == doctest::Approx(t->graph().model().node));
  Best pair = BestSet(*t, GpuSet::FirstN(3), 2);
  CHECK(pair.gpus == "0,1");
  CHECK(pair.gbps == doctest::Approx(100.0));
  Best without0 = BestSet(*t, GpuSet::Of({1, 2}), 2);
  CHECK(without0.gpus == "1,2");
  CHECK(without0.gbps == doctest::Approx(15.75));
}

TEST_CASE("2-GPU rig report: matrix indented, legend lines wrapped by the paste") {
  TopoMatrix m;
  auto t = BuildFixture("2gpu-node-indented-wrapped-legend.txt", &m);
  REQUIRE(m.gpu_count() == 2);
  CHECK(m.nic_count() == 0);
  CHECK(Cell(m.gpu_links, 0, 1) == "NODE");
  CHECK(m.cpu_affinity[1] == "0-15");
  CHECK(m.numa_affinity[0] == 0);
  CHECK_FALSE(m.gpu_numa_id[1].has_value());
  CHECK(m.warnings.empty());
  CHECK(t->bandwidth_gbps(0, 1) == doctest::Approx(t->graph().model().node));
  CHECK(t->nearest_nics(0).empty());
  CHECK(BestSet(*t, GpuSet::FirstN(2), 2).gpus == "0,1");
}

}  // namespace
}  // namespace topofit
