#include "topology/topo_parser.h"

#include <doctest/doctest.h>

#include <string>

#include "topology/fixture_test_util.h"

namespace topofit {
namespace {

std::string ReadFixture(const std::string& name) { return testing::ReadTopoFixture(name); }

using testing::Cell;
using testing::ParseError;
using testing::ParseOk;

const char kSmall[] =
    "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
    "GPU0     X      NV4     PIX     0-15            0               N/A\n"
    "GPU1    NV4      X      PHB     0-15            0               N/A\n"
    "NIC0    PIX     PHB      X\n";

TEST_CASE("dgx1 V100 fixture: hybrid cube-mesh cells, mlx5_0 column, CPU affinity, legend") {
  TopoMatrix m = ParseOk(ReadFixture("dgx1-v100-hybrid-cube-mesh.txt"));
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 1);
  CHECK(m.gpu_names[7] == "GPU7");
  CHECK(m.nic_names[0] == "mlx5_0");
  CHECK(Cell(m.gpu_links, 0, 0) == "X");
  CHECK(Cell(m.gpu_links, 0, 1) == "NV1");
  CHECK(Cell(m.gpu_links, 0, 3) == "NV2");
  CHECK(Cell(m.gpu_links, 0, 5) == "SYS");
  CHECK(Cell(m.gpu_links, 6, 2) == "NV1");
  CHECK(Cell(m.gpu_links, 7, 6) == "NV2");
  CHECK(Cell(m.gpu_nic, 0, 0) == "NODE");
  CHECK(Cell(m.gpu_nic, 2, 0) == "PIX");
  CHECK(Cell(m.gpu_nic, 5, 0) == "SYS");
  CHECK(Cell(m.nic_links, 0, 0) == "X");
  CHECK(m.cpu_affinity[0] == "0-11,24-35");
  CHECK(m.cpu_affinity[4] == "12-23,36-47");
  CHECK_FALSE(m.numa_affinity[0].has_value());
  CHECK_FALSE(m.gpu_numa_id[0].has_value());
  CHECK(m.nic_legend.empty());
}

TEST_CASE("p4d.24xlarge fixture: NV12 everywhere, NUMA 0/1, GPU NUMA ID N/A") {
  TopoMatrix m = ParseOk(ReadFixture("p4d-24xlarge.txt"));
  REQUIRE(m.gpu_count() == 8);
  CHECK(m.nic_count() == 0);
  CHECK(Cell(m.gpu_links, 3, 4) == "NV12");
  CHECK(Cell(m.gpu_links, 7, 0) == "NV12");
  CHECK(m.gpu_links[0][1] == Link{LinkClass::Nv, 12});
  CHECK(m.cpu_affinity[0] == "0-23,48-71");
  CHECK(m.cpu_affinity[7] == "24-47,72-95");
  CHECK(m.numa_affinity[3] == 0);
  CHECK(m.numa_affinity[4] == 1);
  CHECK_FALSE(m.gpu_numa_id[4].has_value());
}

TEST_CASE("DGX A100 fixture: ten NICs, PXB pairs, NPS4 NUMA affinity") {
  TopoMatrix m = ParseOk(ReadFixture("dgx-a100-10nic.txt"));
  REQUIRE(m.gpu_count() == 8);
  REQUIRE(m.nic_count() == 10);
  CHECK(m.nic_names[9] == "NIC9");
  CHECK(Cell(m.gpu_nic, 0, 0) == "PXB");
  CHECK(Cell(m.gpu_nic, 0, 1) == "PXB");
  CHECK(Cell(m.gpu_nic, 0, 2) == "SYS");
  CHECK(Cell(m.gpu_nic, 7, 7) == "PXB");
  CHECK(Cell(m.gpu_nic, 7, 8) == "SYS");
  CHECK(Cell(m.nic_links, 8, 9) == "PIX");
  CHECK(Cell(m.nic_links, 9, 9) == "X");
  CHECK(Cell(m.nic_links, 0, 1) == "PXB");
  CHECK(m.numa_affinity[0] == 3);
  CHECK(m.numa_affinity[2] == 1);
  CHECK(m.numa_affinity[4] == 7);
  CHECK(m.numa_affinity[6] == 5);
  CHECK(m.cpu_affinity[4] == "112-127,240-255");
}

TEST_CASE("L40S fixtures: NODE within a socket, SYS across, one NIC on neither") {
  TopoMatrix m8 = ParseOk(ReadFixture("l40s-8-pcie-dual-socket.txt"));
  REQUIRE(m8.gpu_count() == 8);
  REQUIRE(m8.nic_count() == 1);
  CHECK(Cell(m8.gpu_links, 0, 3) == "NODE");
  CHECK(Cell(m8.gpu_links, 3, 4) == "SYS");
  CHECK(Cell(m8.gpu_nic, 6, 0) == "SYS");
  CHECK(m8.numa_affinity[3] == 0);
  CHECK(m8.numa_affinity[4] == 1);
  CHECK(m8.cpu_affinity[5] == "90-179");

  TopoMatrix m4 = ParseOk(ReadFixture("l40s-4-pcie-single-socket.txt"));
  REQUIRE(m4.gpu_count() == 4);
  CHECK(m4.nic_count() == 0);
  CHECK(Cell(m4.gpu_links, 1, 2) == "NODE");
  CHECK(m4.cpu_affinity[2] == "0-47");
  CHECK(m4.numa_affinity[2] == 0);
}

TEST_CASE("RTX 5090 fixture: tabs, padded X and the extra padding tab after NUMA Affinity") {
  TopoMatrix m = ParseOk(ReadFixture("rtx5090-2-phb.txt"));
  REQUIRE(m.gpu_count() == 2);
  CHECK(m.nic_count() == 0);
  CHECK(Cell(m.gpu_links, 0, 1) == "PHB");
  CHECK(Cell(m.gpu_links, 1, 1) == "X");
  CHECK(m.cpu_affinity[1] == "0-63");
  CHECK(m.numa_affinity[0] == 0);  // "0\t\tN/A": the empty field is padding, not the GPU NUMA ID.
  CHECK_FALSE(m.gpu_numa_id[0].has_value());
}

TEST_CASE("tab-separated rows keep genuinely empty values") {
  TopoMatrix m = ParseOk(
      "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tPHB\t\t1\t\t7\n"
      "GPU1\tPHB\t X \t0-7\t\t\t3\n");
  CHECK(m.cpu_affinity[0].empty());
  CHECK(m.numa_affinity[0] == 1);
  CHECK(m.gpu_numa_id[0] == 7);
  CHECK(m.cpu_affinity[1] == "0-7");
  CHECK_FALSE(m.numa_affinity[1].has_value());
  CHECK(m.gpu_numa_id[1] == 3);
}

TEST_CASE("space-aligned rows place a lone value under the title it lines up with") {
  TopoMatrix m = ParseOk(
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      PIX                     1               N/A\n"
      "GPU1    PIX      X      0-7             1\n");
  CHECK(m.cpu_affinity[0].empty());
  CHECK(m.numa_affinity[0] == 1);
  CHECK(m.cpu_affinity[1] == "0-7");
  CHECK(m.numa_affinity[1] == 1);
}

TEST_CASE("CRLF endings, leading blank lines, NIC legend and large NV counts") {
  std::string text =
      "\r\n  \r\n"
      "        GPU0    GPU1    NIC0    NIC1\r\n"
      "GPU0     X      NV18    PIX     SYS\r\n"
      "GPU1    NV18     X      SYS     PIX\r\n"
      "NIC0    PIX     SYS      X      SYS\r\n"
      "NIC1    SYS     PIX     SYS      X\r\n"
      "\r\nLegend:\r\n\r\n  X    = Self\r\n  NV#  = Connection traversing a bonded set of # NVLinks\r\n"
      "\r\nNIC Legend:\r\n\r\n  NIC0: mlx5_0\r\n  NIC1: mlx5_1\r\n";
  TopoMatrix m = ParseOk(text);
  CHECK(m.gpu_links[0][1] == Link{LinkClass::Nv, 18});
  CHECK(Cell(m.gpu_nic, 1, 1) == "PIX");
  CHECK(m.nic_legend.at("NIC0") == "mlx5_0");
  CHECK(m.nic_legend.at("NIC1") == "mlx5_1");
  CHECK(m.cpu_affinity.size() == 2);
  CHECK(m.cpu_affinity[0].empty());
}

TEST_CASE("a header with 64 GPUs parses and 65 is refused") {
  auto matrix = [](int n) {
    std::string t = "       ";
    for (int i = 0; i < n; ++i) t += " GPU" + std::to_string(i);
    t += "\n";
    for (int r = 0; r < n; ++r) {
      t += "GPU" + std::to_string(r);
      for (int c = 0; c < n; ++c) t += r == c ? " X" : " SYS";
      t += "\n";
    }
    return t;
  };
  CHECK(ParseOk(matrix(64)).gpu_count() == 64);
  std::string err = ParseError(matrix(65));
  CHECK(err.rfind("line 1, column ", 0) == 0);
  CHECK(err.find("expected at most 64 GPUs, got 'GPU64'") != std::string::npos);
}

TEST_CASE("malformed input is refused with line, column and what was expected") {
  struct Case {
    std::string what;
    std::string text;
    std::string prefix;
    std::string wording;
  };
  const std::string head = "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n";
  const std::string row0 = "GPU0     X      NV4     PIX     0-15            0               N/A\n";
  const std::string row1 = "GPU1    NV4      X      PHB     0-15            0               N/A\n";
  const std::string nic = "NIC0    PIX     PHB      X\n";
  const Case cases[] = {
      {"empty input", "", "line 1, column 1: ", "expected a header row starting with 'GPU0', got the end of the input"},
      {"blank input", "\n \n", "line 3, column 1: ", "got the end of the input"},
      {"header without GPU0", "        GPU1    GPU0\n", "line 1, column 9: ", "expected the header row to start with 'GPU0', got 'GPU1'"},
      {"header of titles only", "CPU Affinity\n", "line 1, column 1: ", "expected the header row to start with 'GPU0', got 'CPU'"},
      {"duplicate column", "        GPU0    GPU1    NIC0    NIC0\n", "line 1, column 33: ", "expected distinct column names, got 'NIC0' twice"},
      {"GPU after NIC", "        GPU0    NIC0    GPU1\n", "line 1, column 25: ", "expected a NIC column (GPU columns come first), got 'GPU1'"},
      {"gap in GPU numbers", "        GPU0    GPU2\n", "line 1, column 17: ", "expected 'GPU1' (GPU columns in order), got 'GPU2'"},
      {"unknown title", "        GPU0    CPU Affinity    Foo\n", "line 1, column 33: ", "expected a column title (CPU Affinity, NUMA Affinity, GPU NUMA ID), got 'Foo'"},
      {"truncated matrix", head + row0, "line 3, column 1: ", "expected row 'GPU1' (the header lists 2 GPUs, each needs its row), got the end of the input"},
      {"GPU rows missing", head + nic, "line 2, column 1: ", "expected row 'GPU0', got 'NIC0' (rows must follow the header's column order)"},
      {"rows out of order", head + row1 + row0 + nic, "line 2, column 1: ", "expected row 'GPU0', got 'GPU1' (rows must follow the header's column order)"},
      {"duplicate row", head + row0 + row0 + nic, "line 3, column 1: ", "expected row 'GPU1', got 'GPU0'"},
      {"more rows than columns", head + row0 + row1 + nic + "GPU2    SYS     SYS     SYS\n", "line 5, column 1: ",
       "expected the end of the matrix after 3 rows (the header lists 3 devices), got 'GPU2'"},
      {"blank line inside the matrix", head + row0 + "\n" + row1 + nic, "line 3, column 1: ", "expected row 'GPU1' (the header lists 2 GPUs, each needs its row), got a blank line"},
      {"truncated row", head + row0 + "GPU1    NV4      X\n" + nic, "line 3, column 19: ", "expected a link class for column 'NIC0' (the header lists 3 columns), got the end of the line"},
      {"bad link class", head + row0 + "GPU1    NVX      X      PHB     0-15            0               N/A\n" + nic, "line 3, column 9: ",
       "expected a link class (X, SYS, NODE, PHB, PXB, PIX, NV#) for column 'GPU0', got 'NVX'"},
      {"asymmetric", head + row0 + "GPU1    NV2      X      PHB     0-15            0               N/A\n" + nic, "line 3, column 9: ",
       "expected 'NV4' between GPU1 and GPU0 (the same as GPU0 to GPU1 on line 2; the matrix must be symmetric), got 'NV2'"},
      {"asymmetric NIC", head + row0 + row1 + "NIC0    PIX     PIX      X\n", "line 4, column 17: ", "expected 'PHB' between NIC0 and GPU1"},
      {"no X on diagonal", head + row0 + "GPU1    NV4     SYS     PHB     0-15            0               N/A\n" + nic, "line 3, column 17: ",
       "expected 'X' on the diagonal (GPU1 to itself), got 'SYS'"},
      {"X off the diagonal", head + "GPU0     X       X      PIX     0-15            0               N/A\n" + row1 + nic, "line 2, column 18: ",
       "expected a link class between GPU0 and GPU1, got 'X' (X marks only the diagonal)"},
      {"NVLink to a NIC", head + "GPU0     X      NV4     NV1     0-15            0               N/A\n" + row1 + nic, "line 2, column 25: ",
       "expected a PCIe link class between GPU0 and NIC0, got 'NV1' (NVLink joins GPUs only)"},
      {"non-numeric NUMA", head + "GPU0     X      NV4     PIX     0-15            zero            N/A\n" + row1 + nic, "line 2, column 49: ",
       "expected NUMA Affinity as a NUMA node number or list such as 0, 0-1 or 0,2, or N/A, got 'zero'"},
      {"negative GPU NUMA ID", head + "GPU0     X      NV4     PIX     0-15            0               -1\n" + row1 + nic, "line 2, column 65: ",
       "expected GPU NUMA ID as a NUMA node number or N/A, got '-1'"},
      {"bad CPU affinity", head + "GPU0     X      NV4     PIX     zero            0               N/A\n" + row1 + nic, "line 2, column 33: ",
       "expected CPU Affinity as a CPU list such as 0-11,24-35 or N/A, got 'zero'"},
      {"extra cell in a row", head + row0 + "GPU1    NV4      X      PHB     PIX     0-15    0       N/A\n" + nic, "line 3, column 57: ",
       "expected at most 3 values (CPU Affinity, NUMA Affinity, GPU NUMA ID), got 'N/A'"},
      {"too many values", head + row0 + "GPU1    NV4      X      PHB     0-15    0       N/A     7\n" + nic, "line 3, column 57: ",
       "expected at most 3 values (CPU Affinity, NUMA Affinity, GPU NUMA ID), got '7'"},
      {"values on a NIC row", head + row0 + row1 + "NIC0    PIX     PHB      X      0-15\n", "line 4, column 33: ",
       "expected the end of the line after 3 link cells (NIC rows have no affinity columns), got '0-15'"},
      {"garbage after the matrix", head + row0 + row1 + nic + "\nhello world\n", "line 6, column 1: ", "expected the end of the matrix"},
      {"NIC legend for an unknown NIC", head + row0 + row1 + nic + "\nNIC Legend:\n\n  NIC7: mlx5_7\n", "line 8, column 3: ",
       "expected a NIC legend entry naming a NIC column, such as 'NIC0: mlx5_0', got 'NIC7: mlx5_7'"},
      {"tab row with an empty cell", "\tGPU0\tGPU1\n GPU0\t X \t\n", "line 2, column 11: ", "expected a link class for column 'GPU1', got an empty field"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::string err = ParseError(c.text);
    CHECK_MESSAGE(err.rfind(c.prefix, 0) == 0, err);
    CHECK_MESSAGE(err.find(c.wording) != std::string::npos, err);
  }
}

TEST_CASE("the small well-formed matrix used by the malformed cases parses") {
  TopoMatrix m = ParseOk(kSmall);
  CHECK(m.gpu_links[0][1] == Link{LinkClass::Nv, 4});
  CHECK(Cell(m.gpu_nic, 1, 0) == "PHB");
  CHECK(m.numa_affinity[1] == 0);
}

}  // namespace
}  // namespace topofit
