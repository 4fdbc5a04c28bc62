// ParseTopoMatrix on the real outputs under topology/testdata/topo (SOURCES.md says where each was
// published): cell-level checks of what each machine prints, the multi-node NUMA Affinity decision,
// a matrix whose NIC rows were cut off, and real text damaged in the ways a paste gets damaged.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "topology/fixture_test_util.h"
#include "topology/topo_parser.h"
#include "topology/topology.h"

namespace topofit {
namespace {

using testing::ReadRepoTopoFixture;

using testing::Cell;
using testing::ParseError;
using testing::ParseOk;

// Lines first..last (1-based, inclusive) of `text`, each ending in "\n".
std::string Lines(const std::string& text, int first, int last) {
  std::vector<std::string_view> lines = SplitLines(text);
  std::string out;
  for (int l = first; l <= last && l <= static_cast<int>(lines.size()); ++l) out += std::string(lines[l - 1]) + "\n";
  return out;
}

std::shared_ptr<const Topology> Build(const TopoMatrix& m) {
  auto t = Topology::Build(m);
  REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error()));
  return *t;
}

TEST_CASE("K40m with mlx4_0, an older driver: SOC cells read as SYS, the SOC legend is accepted") {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture("k40m-4-soc-mlx4.txt"));
  REQUIRE(m.gpu_count() == 4);
  REQUIRE(m.nic_count() == 1);
  CHECK(m.nic_names[0] == "mlx4_0");
  CHECK(Cell(m.gpu_links, 0, 1) == "PHB");
  CHECK(Cell(m.gpu_links, 0, 2) == "SYS");
  CHECK(Cell(m.gpu_links, 3, 1) == "SYS");
  CHECK(Cell(m.gpu_links, 2, 3) == "PHB");
  CHECK(Cell(m.gpu_nic, 0, 0) == "SYS");
  CHECK(Cell(m.gpu_nic, 3, 0) == "PHB");
  CHECK(Cell(m.nic_links, 0, 0) == "X");
  CHECK(m.cpu_affinity[1] == "0-5");
  CHECK(m.cpu_affinity[2] == "6-11");
  CHECK_FALSE(m.numa_affinity[0].has_value());
  CHECK(m.numa_affinity_list[0].empty());
  CHECK(m.warnings.empty());
  auto t = Build(m);
  CHECK(t->nearest_nics(2) == std::vector<int>{0});
  CHECK(t->bandwidth_gbps(0, 1) > t->bandwidth_gbps(0, 2));
}

TEST_CASE("H100 cloud VM, driver 580: the header row wrapped in terminal underline escapes is read") {
  const std::string text = ReadRepoTopoFixture("h100-1gpu-underlined-header.txt");
  REQUIRE(text.find("\x1b[4mGPU0") != std::string::npos);  // The escapes are in the file as captured.
  TopoMatrix m = ParseOk(text);
  REQUIRE(m.gpu_count() == 1);
  CHECK(m.nic_count() == 0);
  CHECK(Cell(m.gpu_links, 0, 0) == "X");
  CHECK(m.cpu_affinity[0] == "0-15");
  CHECK(m.numa_affinity[0] == 0);
  CHECK(m.warnings.empty());
  // An escape elsewhere is stripped the same way; errors count columns without the escapes.
  CHECK(ParseError("\x1b[1m        GPU1\x1b[0m    GPU0\n").find("line 1, column 9: ") == 0);
}

TEST_CASE("DGX-1 P100 as published: the header lost its separators, refused at line 1") {
  const std::string text = ReadRepoTopoFixture("dgx1-p100-soc-header-tabs-lost.txt");
  CHECK(ParseError(text) ==
        "line 1, column 6: expected the header row to start with 'GPU0', got "
        "'GPU0GPU1GPU2GPU3GPU4GPU5GPU6GPU7mlx5_0' (column names run together: the separators between them are missing)");

  // Its rows are sound: under a header with the separators back they parse, SOC and all.
  const std::string header = "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tmlx5_0\tmlx5_2\tmlx5_1\tmlx5_3\tCPU Affinity\n";
  TopoMatrix m = ParseOk(header + Lines(text, 2, 22));
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 4);
  CHECK(m.nic_names[1] == "mlx5_2");
  CHECK(Cell(m.gpu_links, 0, 4) == "NV1");
  CHECK(Cell(m.gpu_links, 0, 5) == "SYS");
  CHECK(Cell(m.gpu_links, 7, 3) == "NV1");
  CHECK(Cell(m.gpu_nic, 0, 0) == "PIX");
  CHECK(Cell(m.gpu_nic, 0, 2) == "PHB");
  CHECK(Cell(m.gpu_nic, 5, 1) == "PIX");
  CHECK(Cell(m.nic_links, 0, 2) == "PHB");
  CHECK(Cell(m.nic_links, 1, 2) == "SYS");
  CHECK(m.cpu_affinity[7] == "1-1");
}

TEST_CASE("Traverse POWER9 with V100 NV3 pairs: NUMA nodes 0 and 8, NIC rows ending in empty tab fields") {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture("traverse-power9-v100-nv3.txt"));
  REQUIRE(m.gpu_count() == 4);
  REQUIRE(m.nic_count() == 4);
  CHECK(m.nic_names[3] == "mlx5_3");
  CHECK(m.gpu_links[0][1] == Link{LinkClass::Nv, 3});
  CHECK(Cell(m.gpu_links, 1, 2) == "SYS");
  CHECK(Cell(m.gpu_links, 3, 2) == "NV3");
  CHECK(Cell(m.gpu_nic, 0, 0) == "NODE");
  CHECK(Cell(m.gpu_nic, 0, 2) == "SYS");
  CHECK(Cell(m.gpu_nic, 3, 3) == "NODE");
  CHECK(Cell(m.nic_links, 0, 1) == "PIX");
  CHECK(Cell(m.nic_links, 1, 2) == "SYS");
  CHECK(m.numa_affinity[1] == 0);
  CHECK(m.numa_affinity[2] == 8);
  CHECK(m.numa_affinity_list[3] == "8");
  CHECK_FALSE(m.gpu_numa_id[0].has_value());
  CHECK(m.cpu_affinity[3] == "64-127");
  auto t = Build(m);
  CHECK(t->numa_node(3) == 8);
}

TEST_CASE("H100 NVSwitch box with eight NICs: one PIX NIC per GPU, the NIC legend") {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture("h100-8-nv18-8nic.txt"));
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 8);
  CHECK(m.gpu_links[2][6] == Link{LinkClass::Nv, 18});
  for (int g = 0; g < 8; ++g) {
    CAPTURE(g);
    CHECK(Cell(m.gpu_nic, g, g) == "PIX");
  }
  CHECK(Cell(m.gpu_nic, 0, 1) == "NODE");
  CHECK(Cell(m.gpu_nic, 0, 4) == "SYS");
  CHECK(Cell(m.gpu_nic, 7, 4) == "NODE");
  CHECK(Cell(m.nic_links, 3, 4) == "SYS");
  CHECK(Cell(m.nic_links, 5, 6) == "NODE");
  CHECK(m.nic_legend.at("NIC7") == "mlx5_7");
  CHECK(m.numa_affinity[3] == 0);
  CHECK(m.numa_affinity[4] == 1);
  CHECK(m.cpu_affinity[4] == "48-95,144-191");
  CHECK_FALSE(m.gpu_numa_id[7].has_value());
  CHECK(m.warnings.empty());
  CHECK(Build(m)->nearest_nics(5) == std::vector<int>{5});
}

TEST_CASE("H100 pasted without its NIC rows: accepted with a warning, the same model as the whole matrix") {
  const std::string text = ReadRepoTopoFixture("h100-8-nv18-8nic.txt");
  const TopoMatrix whole = ParseOk(text);
  // Lines 10-17 are the NIC rows; what follows (blank line, legends) stays.
  TopoMatrix cut = ParseOk(Lines(text, 1, 9) + Lines(text, 18, 40));
  REQUIRE(cut.nic_count() == 8);
  REQUIRE(cut.warnings.size() == 1);
  CHECK(cut.warnings[0] ==
        "line 10: no rows for NIC0 to NIC7 (the matrix ends after the GPU rows); links between these NICs are unknown, "
        "each is taken as the closest link through a device that has a row");
  CHECK(cut.gpu_links == whole.gpu_links);
  CHECK(cut.gpu_nic == whole.gpu_nic);
  // On this machine the links the GPU rows force are the real ones: NICs of one socket meet at NODE.
  CHECK(cut.nic_links == whole.nic_links);
  CHECK(cut.nic_legend.at("NIC0") == "mlx5_0");
  CHECK(Build(cut)->fingerprint() == Build(whole)->fingerprint());

  TopoMatrix half = ParseOk(Lines(text, 1, 13));
  REQUIRE(half.warnings.size() == 1);
  CHECK(half.warnings[0] ==
        "line 14: no rows for NIC4 to NIC7 (the matrix ends after 4 of 8 NIC rows); links between these NICs are "
        "unknown, each is taken as the closest link through a device that has a row");
  CHECK(half.nic_links == whole.nic_links);

  TopoMatrix one = ParseOk(Lines(text, 1, 16));
  REQUIRE(one.warnings.size() == 1);
  CHECK(one.warnings[0] == "line 17: no row for NIC7 (the matrix ends after 7 of 8 NIC rows); its links are all in the other rows");
  CHECK(one.nic_links == whole.nic_links);
}

TEST_CASE("missing NIC rows: each link between two of them is the best the rows that are there force") {
  // Tab-separated like nvidia-smi; NIC0 shares a switch with GPU0, NIC1 with GPU1, NIC2 hangs off no GPU.
  TopoMatrix m = ParseOk(
      "\tGPU0\tGPU1\tNIC0\tNIC1\tNIC2\n"
      "GPU0\t X \tPHB\tPIX\tPHB\tSYS\n"
      "GPU1\tPHB\t X \tPHB\tPIX\tSYS\n");
  REQUIRE(m.warnings.size() == 1);
  CHECK(Cell(m.nic_links, 0, 1) == "PHB");
  CHECK(Cell(m.nic_links, 1, 0) == "PHB");
  CHECK(Cell(m.nic_links, 0, 2) == "SYS");
  CHECK(Cell(m.nic_links, 2, 2) == "X");
  Build(m);
}

TEST_CASE("8x RTX 4090: every GPU pair SYS, two NICs behind GPU6, the NUMA Affinity padding tab") {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture("rtx4090-8-2nic-sys.txt"));
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 2);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      CAPTURE(a);
      CAPTURE(b);
      CHECK(Cell(m.gpu_links, a, b) == (a == b ? "X" : "SYS"));
    }
  }
  CHECK(Cell(m.gpu_nic, 6, 0) == "PHB");
  CHECK(Cell(m.gpu_nic, 6, 1) == "PHB");
  CHECK(Cell(m.gpu_nic, 7, 0) == "SYS");
  CHECK(Cell(m.nic_links, 0, 1) == "PIX");
  CHECK(m.numa_affinity[3] == 0);
  CHECK(m.numa_affinity[4] == 1);
  CHECK(m.numa_affinity_list[4] == "1");
  CHECK_FALSE(m.gpu_numa_id[4].has_value());
  CHECK(m.cpu_affinity[7] == "56-111,168-223");
  CHECK(Build(m)->nearest_nics(6) == (std::vector<int>{0, 1}));
}

TEST_CASE("5-GPU dual-socket workstation: PHB and NODE within a socket, GPU0 alone on node 1") {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture("workstation-5gpu-two-numa.txt"));
  REQUIRE(m.gpu_count() == 5);
  CHECK(m.nic_count() == 0);
  CHECK(Cell(m.gpu_links, 0, 4) == "SYS");
  CHECK(Cell(m.gpu_links, 1, 2) == "PHB");
  CHECK(Cell(m.gpu_links, 1, 3) == "NODE");
  CHECK(Cell(m.gpu_links, 4, 3) == "PHB");
  CHECK(m.numa_affinity[0] == 1);
  CHECK(m.numa_affinity[1] == 0);
  CHECK(m.cpu_affinity[0] == "8-15,24-31");
  CHECK(m.cpu_affinity[2] == "0-7,16-23");
  auto t = Build(m);
  CHECK(t->numa_node(0) == 1);
  CHECK(t->bandwidth_gbps(1, 2) > t->bandwidth_gbps(1, 3));
  CHECK(t->bandwidth_gbps(1, 3) > t->bandwidth_gbps(0, 1));
}

TEST_CASE("2x A100 NV12 with eight NICs and empty affinity columns, space-aligned") {
  TopoMatrix m = ParseOk(ReadRepoTopoFixture("a100-2-nv12-8nic-no-affinity.txt"));
  REQUIRE(m.gpu_count() == 2);
  REQUIRE(m.nic_count() == 8);
  CHECK(m.gpu_links[1][0] == Link{LinkClass::Nv, 12});
  CHECK(Cell(m.gpu_nic, 0, 0) == "SYS");
  CHECK(Cell(m.gpu_nic, 0, 6) == "PXB");
  CHECK(Cell(m.gpu_nic, 1, 7) == "PXB");
  CHECK(Cell(m.nic_links, 6, 7) == "PIX");
  CHECK(Cell(m.nic_links, 0, 1) == "PIX");
  CHECK(Cell(m.nic_links, 1, 2) == "SYS");
  for (int g = 0; g < 2; ++g) {
    CAPTURE(g);
    CHECK(m.cpu_affinity[g].empty());
    CHECK(m.numa_affinity_list[g].empty());
    CHECK_FALSE(m.numa_affinity[g].has_value());
    CHECK_FALSE(m.gpu_numa_id[g].has_value());
  }
  CHECK(Build(m)->nearest_nics(0) == (std::vector<int>{6, 7}));
}

TEST_CASE("NUMA Affinity and CPU Affinity read as lists: one node is the GPU's, several leave it unknown") {
  auto row = [](const std::string& cpu, const std::string& numa) {
    return ParseOk("\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t" + cpu + "\t" + numa + "\t\tN/A\n");
  };
  struct Case {
    std::string numa;
    std::optional<int> node;
  };
  const Case cases[] = {{"3", 3}, {"0-0", 0}, {"2,2", 2}, {"0-1", std::nullopt}, {"0,2", std::nullopt},
                        {"0-1,3", std::nullopt}, {"N/A", std::nullopt}};
  for (const Case& c : cases) {
    CAPTURE(c.numa);
    TopoMatrix m = row("0-23,48-71", c.numa);
    CHECK(m.numa_affinity[0] == c.node);
    CHECK(m.numa_affinity_list[0] == (c.numa == "N/A" ? "" : c.numa));
  }
  CHECK(row("0,2,4,6,8,10", "0").cpu_affinity[0] == "0,2,4,6,8,10");
  CHECK(row("0-0,8-8,16-16", "0").cpu_affinity[0] == "0-0,8-8,16-16");

  const std::string head = "\tGPU0\tCPU Affinity\tNUMA Affinity\n";
  CHECK(ParseError(head + "GPU0\t X \t0-7\t1-0\n") ==
        "line 2, column 14: expected NUMA Affinity as a NUMA node number or list such as 0, 0-1 or 0,2, or N/A, got '1-0'");
  CHECK(ParseError(head + "GPU0\t X \t0-7\t0,\n") ==
        "line 2, column 14: expected NUMA Affinity as a NUMA node number or list such as 0, 0-1 or 0,2, or N/A, got '0,'");
  CHECK(ParseError(head + "GPU0\t X \t0--7\t0\n") ==
        "line 2, column 10: expected CPU Affinity as a CPU list such as 0-11,24-35 or N/A, got '0--7'");
}

TEST_CASE("real text damaged in a paste is refused with the line and column") {
  const std::string h100 = ReadRepoTopoFixture("h100-8-nv18-8nic.txt");
  const std::string k40m = ReadRepoTopoFixture("k40m-4-soc-mlx4.txt");
  struct Case {
    std::string what;
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"a GPU row missing", Lines(h100, 1, 4) + Lines(h100, 6, 40),
       "line 5, column 1: expected row 'GPU3', got 'GPU4' (rows must follow the header's column order)"},
      {"the matrix ends inside the GPU rows", Lines(h100, 1, 5),
       "line 6, column 1: expected row 'GPU4' (the header lists 8 GPUs, each needs its row), got the end of the input"},
      {"the GPU rows end at a blank line", Lines(h100, 1, 8) + "\n" + Lines(h100, 9, 17),
       "line 9, column 1: expected row 'GPU7' (the header lists 8 GPUs, each needs its row), got a blank line"},
      {"a GPU row cut short", Lines(h100, 1, 3) + Lines(h100, 4, 4).substr(0, 44) + "\n" + Lines(h100, 5, 40),
       "line 4, column 45: expected a link class for column 'GPU5' (the header lists 16 columns), got the end of the line"},
      {"a NIC row cut short", Lines(h100, 1, 10) + Lines(h100, 11, 11).substr(0, 20) + "\n" + Lines(h100, 12, 40),
       "line 11, column 21: expected a link class for column 'GPU2' (the header lists 16 columns), got the end of the line"},
      {"a cell that is not a link class", Lines(k40m, 1, 2) + "GPU1\tPHX\t X \tSOC\tSOC\tSOC\t0-5\n" + Lines(k40m, 4, 15),
       "line 3, column 6: expected a link class (X, SYS, NODE, PHB, PXB, PIX, NV#) for column 'GPU0', got 'PHX'"},
      {"text after the GPU rows that is no row", Lines(h100, 1, 9) + "Legend\n",
       "line 10, column 1: expected row 'NIC0', got 'Legend'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(ParseError(c.text) == c.error);
  }
}

}  // namespace
}  // namespace topofit
