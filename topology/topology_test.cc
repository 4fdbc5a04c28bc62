#include "topology/topology.h"

#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "topology/fixture_test_util.h"
#include "topology/node_graph.h"
#include "topology/topo_parser.h"

namespace topofit {
namespace {

TopoMatrix Fixture(const std::string& name) { return testing::ParseTopoFixture(name); }

std::shared_ptr<const Topology> BuildOk(TopoMatrix m) {
  auto t = Topology::Build(std::move(m));
  REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error()));
  return *t;
}

const char* const kFixtures[] = {"dgx1-v100-hybrid-cube-mesh.txt", "p4d-24xlarge.txt", "dgx-a100-10nic.txt",
                                 "l40s-8-pcie-dual-socket.txt", "l40s-4-pcie-single-socket.txt", "rtx5090-2-phb.txt"};

TEST_CASE("every fixture builds, pair links copy the matrix and bandwidths are the graph's in MB/s") {
  for (const char* name : kFixtures) {
    CAPTURE(std::string(name));
    TopoMatrix m = Fixture(name);
    auto t = BuildOk(m);
    REQUIRE(t->gpu_count() == m.gpu_count());
    CHECK(t->nic_count() == m.nic_count());
    CHECK(t->pairs().n == m.gpu_count());
    CHECK(t->selector().gpu_count() == m.gpu_count());
    for (int a = 0; a < m.gpu_count(); ++a) {
      CHECK(t->link(a, a).cls == LinkClass::Self);
      CHECK(t->pairs().bw(a, a) == 0);
      for (int b = 0; b < m.gpu_count(); ++b) {
        if (a == b) continue;
        CHECK(t->link(a, b) == m.gpu_links[a][b]);
        CHECK(t->pairs().bw(a, b) == static_cast<uint32_t>(std::lround(t->graph().gpu_bandwidth_gbps(a, b) * 1000)));
        CHECK(t->bandwidth_gbps(a, b) == doctest::Approx(t->graph().gpu_bandwidth_gbps(a, b)).epsilon(1e-3));
      }
    }
  }
}

TEST_CASE("bandwidth order: better link class means strictly more bandwidth within a node") {
  for (const char* name : kFixtures) {
    CAPTURE(std::string(name));
    auto t = BuildOk(Fixture(name));
    const int n = t->gpu_count();
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        for (int c = 0; c < n; ++c) {
          for (int d = 0; d < n; ++d) {
            if (a == b || c == d) continue;
            if (t->link(c, d) < t->link(a, b)) CHECK(t->pairs().bw(a, b) > t->pairs().bw(c, d));
            if (t->link(c, d) == t->link(a, b)) CHECK(t->pairs().bw(a, b) == t->pairs().bw(c, d));
          }
        }
      }
    }
  }
  auto l40s = BuildOk(Fixture("l40s-8-pcie-dual-socket.txt"));
  CHECK(l40s->bandwidth_gbps(0, 4) / l40s->bandwidth_gbps(0, 1) <= 0.51);  // Cross-socket: half or less.
}

TEST_CASE("NVSwitch detection, NUMA nodes and nearest NICs") {
  auto p4d = BuildOk(Fixture("p4d-24xlarge.txt"));
  CHECK(p4d->graph().has_nvswitch());
  CHECK(p4d->bandwidth_gbps(2, 6) == doctest::Approx(300.0));
  CHECK(p4d->numa_node(0) == 0);
  CHECK(p4d->numa_node(7) == 1);
  CHECK(p4d->nearest_nics(0).empty());

  auto dgx = BuildOk(Fixture("dgx-a100-10nic.txt"));
  CHECK(dgx->graph().has_nvswitch());
  CHECK(dgx->nearest_nics(0) == std::vector<int>{0, 1});
  CHECK(dgx->nearest_nics(1) == std::vector<int>{0, 1});
  CHECK(dgx->nearest_nics(3) == std::vector<int>{2, 3});
  CHECK(dgx->nearest_nics(6) == std::vector<int>{6, 7});
  CHECK(dgx->numa_node(4) == 7);

  auto dgx1 = BuildOk(Fixture("dgx1-v100-hybrid-cube-mesh.txt"));
  CHECK_FALSE(dgx1->graph().has_nvswitch());
  REQUIRE(dgx1->nearest_nics(2) == std::vector<int>{0});
  CHECK(dgx1->matrix().nic_names[0] == "mlx5_0");
  CHECK(ToString(dgx1->matrix().gpu_nic[2][0]) == "PIX");
  CHECK(dgx1->nearest_nics(0) == std::vector<int>{0});
  CHECK_FALSE(dgx1->numa_node(0).has_value());
}

TEST_CASE("the selector answers on the built pair matrix") {
  auto p4d = BuildOk(Fixture("p4d-24xlarge.txt"));
  auto four = p4d->selector().Best(GpuSet::FirstN(8), 4);
  REQUIRE(four.has_value());
  CHECK(four->gpus.size() == 4);
  CHECK(four->ring_mbps == 300000);

  auto dgx1 = BuildOk(Fixture("dgx1-v100-hybrid-cube-mesh.txt"));
  auto pair = dgx1->selector().Best(GpuSet::FirstN(8), 2);
  REQUIRE(pair.has_value());
  std::vector<int> p = pair->gpus.Indices();
  CHECK(dgx1->link(p[0], p[1]) == Link{LinkClass::Nv, 2});  // A doubled NVLink pair wins.
  CHECK(pair->ring_mbps == 50000);
  auto quad = dgx1->selector().Best(GpuSet::FirstN(8), 4);
  REQUIRE(quad.has_value());
  CHECK(quad->ring_mbps >= 25000);  // A ring of NVLinks only, no PCIe hop.
}

TEST_CASE("Build refuses matrices that cannot describe a node") {
  TopoMatrix empty;
  auto e = Topology::Build(empty);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error() == "a topology needs at least one GPU");

  TopoMatrix big;
  for (int i = 0; i < 65; ++i) big.gpu_names.push_back("GPU" + std::to_string(i));
  auto b = Topology::Build(big);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error() == "a node may have at most 64 GPUs, got 65");

  TopoMatrix m = Fixture("rtx5090-2-phb.txt");
  m.gpu_links[1][0] = Link{LinkClass::Sys, 0};
  auto a = Topology::Build(m);
  REQUIRE_FALSE(a.ok());
  CHECK(a.error() == "the GPU matrix is not symmetric at [1][0]");

  TopoMatrix short_numa = Fixture("rtx5090-2-phb.txt");
  short_numa.numa_affinity.pop_back();
  auto s = Topology::Build(short_numa);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error() == "NUMA Affinity has 1 entries, expected 2 (one per GPU) or none");
}

TEST_CASE("the registry interns by fingerprint and shares instances") {
  TopologyRegistry registry;
  auto a = registry.Intern(Fixture("p4d-24xlarge.txt"));
  auto b = registry.Intern(Fixture("p4d-24xlarge.txt"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->get() == b->get());
  CHECK(registry.size() == 1);
  auto c = registry.Intern(Fixture("dgx-a100-10nic.txt"));
  REQUIRE(c.ok());
  CHECK(c->get() != a->get());
  CHECK((*c)->fingerprint() != (*a)->fingerprint());
  CHECK(registry.size() == 2);

  TopoMatrix other_numa = Fixture("p4d-24xlarge.txt");
  other_numa.numa_affinity[0] = 1;
  auto d = registry.Intern(other_numa);
  REQUIRE(d.ok());
  CHECK(d->get() != a->get());
  CHECK(registry.size() == 3);

  TopoMatrix bad;
  CHECK_FALSE(registry.Intern(bad).ok());
  CHECK(registry.size() == 3);

  std::vector<const Topology*> seen(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { seen[i] = registry.Intern(Fixture("l40s-4-pcie-single-socket.txt"))->get(); });
  }
  for (auto& t : threads) t.join();
  for (const Topology* t : seen) CHECK(t == seen[0]);
  CHECK(registry.size() == 4);
}

TEST_CASE("a matrix that is not one PCIe tree builds, the selector sees each pair at its class, warnings() says why") {
  // Synthetic: GPU0 and GPU2 each share a switch with GPU1, yet the matrix puts them at NODE.
  Result<TopoMatrix> m = ParseTopoMatrix(
      "        GPU0    GPU1    GPU2\n"
      "GPU0     X      PIX     NODE\n"
      "GPU1    PIX      X      PIX\n"
      "GPU2    NODE    PIX      X\n");
  REQUIRE(m.ok());
  auto t = BuildOk(*m);
  REQUIRE(t->warnings().size() == 1);
  CHECK(t->warnings()[0].rfind("the matrix is not one PCIe tree: it says GPU0 and GPU2 are NODE, but its other entries put them at PIX", 0) == 0);
  CHECK(t->warnings() == t->graph().warnings());
  const BandwidthModel& b = t->graph().model();
  CHECK(t->bandwidth_gbps(0, 2) == doctest::Approx(b.node).epsilon(0.001));
  CHECK(t->bandwidth_gbps(1, 2) == doctest::Approx(b.pix).epsilon(0.001));
  // The slowest hop sets the ring: any 2-set with GPU1 beats {0,2}; the 3-ring is as slow as NODE.
  auto two = t->selector().Best(GpuSet::FirstN(3), 2);
  REQUIRE(two.has_value());
  CHECK(two->gpus == GpuSet::Of({0, 1}));
  CHECK(t->selector().RingMbps(GpuSet::FirstN(3)) == t->pairs().bw(0, 2));
  // Interned like any other: one instance, the same warnings.
  TopologyRegistry registry;
  auto a = registry.Intern(*m);
  auto c = registry.Intern(*m);
  REQUIRE(a.ok());
  REQUIRE(c.ok());
  CHECK(a->get() == c->get());
  CHECK((*a)->warnings() == t->warnings());
  CHECK(BuildOk(Fixture("dgx-a100-10nic.txt"))->warnings().empty());
}

}  // namespace
}  // namespace topofit
