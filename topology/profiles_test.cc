#include "topology/profiles.h"

#include <doctest/doctest.h>


#include "topology/fixture_test_util.h"
#include "topology/node_graph.h"
#include "topology/topo_parser.h"
#include "topology/topology.h"

namespace topofit {
namespace {

TopoMatrix Fixture(const std::string& name) { return testing::ParseTopoFixture(name); }

TopoMatrix Profile(const std::string& name) {
  Result<TopoMatrix> m = ProfileMatrix(name);
  REQUIRE_MESSAGE(m.ok(), name << ": " << (m.ok() ? "" : m.error()));
  return *m;
}

TEST_CASE("every listed profile parses, builds and has the GPU count it announces") {
  std::vector<ProfileInfo> profiles = ListProfiles();
  CHECK(profiles.size() >= 12);
  for (const ProfileInfo& p : profiles) {
    CAPTURE(p.name);
    CHECK_FALSE(p.description.empty());
    if (p.gpu_count == 0) {
      CHECK(p.name == "generic-pcie-N");
      continue;
    }
    TopoMatrix m = Profile(p.name);
    CHECK(m.gpu_count() == p.gpu_count);
    auto t = Topology::Build(m);
    CHECK_MESSAGE(t.ok(), (t.ok() ? "" : t.error()));
  }
}

TEST_CASE("profiles reproduce the GPU blocks of their real fixtures") {
  struct Pair {
    const char* profile;
    const char* fixture;
    bool same_machine;  // Else only the GPU x GPU block is the same.
  };
  for (const Pair& p : {Pair{"dgx1-v100", "dgx1-v100-hybrid-cube-mesh.txt", true}, Pair{"hgx-a100-8", "p4d-24xlarge.txt", true},
                        Pair{"hgx-a100-8", "dgx-a100-10nic.txt", false}, Pair{"dgx-a100", "dgx-a100-10nic.txt", true},
                        Pair{"pcie-8-dual-socket", "l40s-8-pcie-dual-socket.txt", true},
                        Pair{"pcie-4-single-socket", "l40s-4-pcie-single-socket.txt", true},
                        Pair{"phb-2-workstation", "rtx5090-2-phb.txt", true}}) {
    CAPTURE(std::string(p.profile));
    CAPTURE(std::string(p.fixture));
    TopoMatrix prof = Profile(p.profile);
    TopoMatrix real = Fixture(p.fixture);
    CHECK(prof.gpu_names == real.gpu_names);
    CHECK(prof.gpu_links == real.gpu_links);
    if (p.same_machine) {
      CHECK(prof.cpu_affinity == real.cpu_affinity);
      CHECK(prof.nic_names == real.nic_names);
      CHECK(prof.gpu_nic == real.gpu_nic);
      CHECK(prof.nic_links == real.nic_links);
    }
    if (p.same_machine && real.numa_affinity[0].has_value()) CHECK(prof.numa_affinity == real.numa_affinity);
  }
  // The DGX-1 fixture has no NUMA column; the profile adds what its CPU Affinity implies.
  TopoMatrix dgx1 = Profile("dgx1-v100");
  CHECK(dgx1.numa_affinity[3] == 0);
  CHECK(dgx1.numa_affinity[4] == 1);
}

TEST_CASE("dgx1-p100 is the same mesh with every NVLink pair single") {
  TopoMatrix v100 = Profile("dgx1-v100");
  TopoMatrix p100 = Profile("dgx1-p100");
  int nv_pairs = 0;
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (v100.gpu_links[a][b].cls == LinkClass::Nv) {
        ++nv_pairs;
        CHECK(p100.gpu_links[a][b] == Link{LinkClass::Nv, 1});
      } else {
        CHECK(p100.gpu_links[a][b] == v100.gpu_links[a][b]);
      }
    }
  }
  CHECK(nv_pairs == 32);  // 4 NVLink peers per GPU: P100's four links.
}

TEST_CASE("NV18 boards: NVSwitch, one PIX NIC per GPU, two sockets") {
  for (const char* name : {"hgx-h100-8", "hgx-h200-8", "hgx-b200-8"}) {
    CAPTURE(std::string(name));
    auto t = Topology::Build(Profile(name));
    REQUIRE(t.ok());
    const Topology& topo = **t;
    CHECK(topo.graph().has_nvswitch());
    CHECK(topo.graph().model().pcie_gen == 5);
    CHECK(topo.bandwidth_gbps(0, 7) == doctest::Approx(450.0));
    CHECK(topo.nic_count() == 8);
    for (int g = 0; g < 8; ++g) {
      CHECK(topo.nearest_nics(g) == std::vector<int>{g});
      CHECK(topo.numa_node(g) == (g < 4 ? 0 : 1));
    }
    CHECK(topo.matrix().nic_legend.at("NIC3") == "mlx5_3");
  }
}

TEST_CASE("4-GPU all-to-all boards are direct NVLink, not NVSwitch") {
  auto a100 = Topology::Build(Profile("hgx-a100-4"));
  REQUIRE(a100.ok());
  CHECK_FALSE((*a100)->graph().has_nvswitch());
  CHECK((*a100)->link(0, 3) == Link{LinkClass::Nv, 4});
  CHECK((*a100)->bandwidth_gbps(1, 2) == doctest::Approx(100.0));
  auto h100 = Topology::Build(Profile("hgx-h100-4"));
  REQUIRE(h100.ok());
  CHECK((*h100)->link(2, 3) == Link{LinkClass::Nv, 6});
  CHECK((*h100)->numa_node(3) == 0);
}

TEST_CASE("hgx-a100-16: all 16 GPUs on one NVSwitch fabric at the 8-GPU board's per-pair bandwidth") {
  auto t16 = Topology::Build(Profile("hgx-a100-16"));
  REQUIRE(t16.ok());
  auto t8 = Topology::Build(Profile("hgx-a100-8"));
  REQUIRE(t8.ok());
  const Topology& topo = **t16;
  CHECK(topo.gpu_count() == 16);
  CHECK(topo.graph().has_nvswitch());
  CHECK(topo.nic_count() == 0);
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      if (a != b) CHECK(topo.link(a, b) == Link{LinkClass::Nv, 12});
    }
  }
  // Across the two baseboards (0 and 15) as fast as within one, and as fast as on the 8-GPU board.
  CHECK(topo.bandwidth_gbps(0, 15) == doctest::Approx(topo.bandwidth_gbps(0, 1)));
  CHECK(topo.bandwidth_gbps(0, 15) == doctest::Approx((*t8)->bandwidth_gbps(0, 7)));
}

TEST_CASE("generic-pcie-N: any N from 1 to 64, every pair NODE, nothing else assumed") {
  for (int n : {1, 2, 5, 16, 64}) {
    CAPTURE(n);
    TopoMatrix m = Profile("generic-pcie-" + std::to_string(n));
    REQUIRE(m.gpu_count() == n);
    CHECK(m.nic_count() == 0);
    for (int a = 0; a < n; ++a) {
      CHECK_FALSE(m.numa_affinity[a].has_value());
      for (int b = 0; b < n; ++b) CHECK(m.gpu_links[a][b].cls == (a == b ? LinkClass::Self : LinkClass::Node));
    }
  }
  for (const char* bad : {"generic-pcie-0", "generic-pcie-65", "generic-pcie-", "generic-pcie-4x", "dgx-9000"}) {
    CAPTURE(std::string(bad));
    Result<TopoMatrix> m = ProfileMatrix(bad);
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().find(std::string("unknown profile '") + bad + "'") == 0);
    CHECK(m.error().find("dgx1-v100") != std::string::npos);
    CHECK(m.error().find("generic-pcie-N") != std::string::npos);
  }
}

TEST_CASE("ProfileForProduct maps GPU Feature Discovery labels") {
  CHECK(ProfileForProduct("Tesla-V100-SXM2-16GB", 8) == "dgx1-v100");
  CHECK(ProfileForProduct("Tesla-P100-SXM2-16GB", 8) == "dgx1-p100");
  CHECK(ProfileForProduct("NVIDIA-A100-SXM4-80GB", 8) == "hgx-a100-8");
  CHECK(ProfileForProduct("A100-SXM4-40GB", 8) == "hgx-a100-8");
  CHECK(ProfileForProduct("NVIDIA-A100-SXM4-40GB", 4) == "hgx-a100-4");
  CHECK(ProfileForProduct("NVIDIA-A100-SXM4-40GB", 16) == "hgx-a100-16");
  CHECK(ProfileForProduct("NVIDIA-H100-80GB-HBM3", 8) == "hgx-h100-8");
  CHECK(ProfileForProduct("NVIDIA-H100-80GB-HBM3", 4) == "hgx-h100-4");
  CHECK(ProfileForProduct("NVIDIA-H200", 8) == "hgx-h200-8");
  CHECK(ProfileForProduct("NVIDIA-B200", 8) == "hgx-b200-8");
  CHECK(ProfileForProduct("NVIDIA-L40S", 8) == "pcie-8-dual-socket");
  CHECK(ProfileForProduct("NVIDIA-L40S", 4) == "pcie-4-single-socket");
  CHECK(ProfileForProduct("NVIDIA-GeForce-RTX-4090", 2) == "phb-2-workstation");
  // Unknown products, PCIe variants and unusual counts fall back to the generic profile.
  CHECK(ProfileForProduct("NVIDIA-GeForce-RTX-4090", 4) == "generic-pcie-4");
  CHECK(ProfileForProduct("NVIDIA-H100-PCIe", 8) == "generic-pcie-8");
  CHECK(ProfileForProduct("NVIDIA-H200-NVL", 8) == "generic-pcie-8");
  CHECK(ProfileForProduct("NVIDIA-GH200-480GB", 8) == "generic-pcie-8");
  CHECK(ProfileForProduct("NVIDIA-A100-SXM4-80GB", 3) == "generic-pcie-3");
  CHECK(ProfileForProduct("Some-Future-GPU", 6) == "generic-pcie-6");
  CHECK(ProfileForProduct("", 0) == "generic-pcie-1");
  CHECK(ProfileForProduct("x", 100) == "generic-pcie-64");
  for (const char* product : {"NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "Unknown"}) {
    CHECK(ProfileMatrix(ProfileForProduct(product, 8)).ok());
  }
}

}  // namespace
}  // namespace topofit
