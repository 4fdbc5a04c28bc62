// Runs the built `topofit topo` and checks what it prints and its exit status.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "extender/cli/cli_test_util.h"
#include "topology/fixture_test_util.h"
#include "topology/profiles.h"

namespace {

using topofit::cli::testing::Run;
using topofit::cli::testing::TempDir;
using topofit::cli::testing::Topofit;

std::string Fixture(const std::string& name) { return std::string("'") + TOPOFIT_FIXTURES_DIR + "/topo/" + name + "'"; }

nlohmann::json Json(const Run& r) {
  REQUIRE_MESSAGE(r.status == 0, r.err);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(!j.is_discarded(), r.out);
  REQUIRE(j.is_object());
  return j;
}

TEST_CASE("topo --json on the p4d fixture: links, bandwidths, NUMA, best sets") {
  nlohmann::json j = Json(Topofit("topo --json " + Fixture("p4d-24xlarge.txt")));
  CHECK(j["gpu_count"] == 8);
  CHECK(j["nic_count"] == 0);
  REQUIRE(j["links"].size() == 8);
  CHECK(j["links"][0][0] == "X");
  CHECK(j["links"][0][1] == "NV12");
  CHECK(j["links"][7][3] == "NV12");
  CHECK(j["bandwidth_gbps"][0][0] == 0);
  CHECK(j["bandwidth_gbps"][2][5].get<double>() == doctest::Approx(300.0));
  CHECK(j["numa"][0] == 0);
  CHECK(j["numa"][5] == 1);
  CHECK(j["nvswitch"] == true);
  for (int k = 1; k <= 8; ++k) {
    const auto& set = j["best_sets"][std::to_string(k)];
    REQUIRE(set.is_array());
    CHECK(set.size() == static_cast<size_t>(k));
  }
  CHECK(j["best_set_bandwidth_gbps"]["4"].get<double>() == doctest::Approx(300.0));
}

TEST_CASE("topo --json on the DGX-1 fixture: SYS pairs, unknown NUMA, the PIX NIC, an NV2 pair first") {
  nlohmann::json j = Json(Topofit("topo --json " + Fixture("dgx1-v100-hybrid-cube-mesh.txt")));
  CHECK(j["gpu_count"] == 8);
  CHECK(j["nic_count"] == 1);
  CHECK(j["nics"][0] == "mlx5_0");
  CHECK(j["links"][0][5] == "SYS");
  CHECK(j["links"][1][2] == "NV2");
  CHECK(j["numa"][3].is_null());
  CHECK(j["nearest_nics"][2] == nlohmann::json::array({"mlx5_0"}));
  CHECK(j["gpu_nic_links"][2][0] == "PIX");
  const auto& pair = j["best_sets"]["2"];
  REQUIRE(pair.size() == 2);
  CHECK(j["links"][pair[0].get<int>()][pair[1].get<int>()] == "NV2");
  CHECK(j["bandwidth_gbps"][0][5].get<double>() < j["bandwidth_gbps"][0][1].get<double>());
}

TEST_CASE("topo reads stdin and prints a readable summary") {
  Run r = Topofit("topo - < " + Fixture("dgx-a100-10nic.txt"));
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("<stdin>: 8 GPUs, 10 NICs, NVSwitch fabric") != std::string::npos);
  CHECK(r.out.find("nearest NIC NIC0,NIC1 (PXB)") != std::string::npos);
  CHECK(r.out.find("NUMA node 3") != std::string::npos);
  CHECK(r.out.find("k=8") != std::string::npos);
  CHECK(r.out.find("300.0") != std::string::npos);
}

TEST_CASE("malformed input: exit status 2 and the line/column message on stderr") {
  TempDir dir;
  std::string path = dir.Write("topo.txt", "        GPU0    GPU1\nGPU0     X      NV2\nGPU1    NV1      X\n");
  Run r = Topofit("topo --json '" + path + "'");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("line 3, column 9: expected 'NV2' between GPU1 and GPU0") != std::string::npos);

  Run missing = Topofit("topo /nonexistent/topo.txt");
  CHECK(missing.status == 2);
  CHECK(missing.err.find("cannot open") != std::string::npos);

  Run empty = Topofit("topo - < /dev/null");
  CHECK(empty.status == 2);
  CHECK(empty.err.find("line 1, column 1: expected a header row") != std::string::npos);
}

TEST_CASE("a paste without its NIC rows: exit 0, the model, and the warning logged on stderr") {
  auto text = topofit::ReadFile(topofit::testing::RepoTopoFixturePath("h100-8-nv18-8nic.txt"));
  REQUIRE(text.ok());
  // The header and the eight GPU rows, then the legends: the NIC rows (lines 10-17) are cut off.
  std::string cut;
  size_t pos = 0;
  for (int line = 1; pos < text->size(); ++line) {
    size_t end = text->find('\n', pos) + 1;
    if (line < 10 || line > 17) cut += text->substr(pos, end - pos);
    pos = end;
  }
  TempDir dir;
  std::string path = dir.Write("topo.txt", cut);
  Run r = Topofit("topo '" + path + "'");
  nlohmann::json j = Json(Topofit("topo --json '" + path + "'"));
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find(": 8 GPUs, 8 NICs, NVSwitch fabric") != std::string::npos);
  CHECK(r.err.find("level=warn msg=\"topology warning\"") != std::string::npos);
  CHECK(r.err.find("detail=\"line 10: no rows for NIC0 to NIC7 (the matrix ends after the GPU rows)") != std::string::npos);
  REQUIRE(j["warnings"].size() == 1);
  CHECK(j["warnings"][0].get<std::string>().rfind("line 10: no rows for NIC0 to NIC7", 0) == 0);
  CHECK(j["nearest_nics"][3] == nlohmann::json::array({"NIC3"}));

  nlohmann::json whole = Json(Topofit("topo --json '" + topofit::testing::RepoTopoFixturePath("h100-8-nv18-8nic.txt") + "'"));
  CHECK(whole["warnings"].empty());
}

TEST_CASE("a matrix that is not one PCIe tree: exit 0, modelled as given, the warning on stderr, in the summary and in --json") {
  TempDir dir;
  // GPU0 and GPU2 each share a switch with GPU1, yet the matrix puts them at NODE.
  std::string path = dir.Write("topo.txt",
                               "        GPU0    GPU1    GPU2\n"
                               "GPU0     X      PIX     NODE\n"
                               "GPU1    PIX      X      PIX\n"
                               "GPU2    NODE    PIX      X\n");
  Run r = Topofit("topo '" + path + "'");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string warning = "the matrix is not one PCIe tree: it says GPU0 and GPU2 are NODE, but its other entries put them at PIX";
  CHECK(r.err.find("level=warn msg=\"topology warning\"") != std::string::npos);
  CHECK(r.err.find("detail=\"" + warning) != std::string::npos);
  CHECK(r.out.find("Modelled as given: " + warning) != std::string::npos);
  nlohmann::json j = Json(Topofit("topo --json '" + path + "'"));
  REQUIRE(j["warnings"].size() == 1);
  CHECK(j["warnings"][0].get<std::string>().rfind(warning, 0) == 0);
  CHECK(j["links"][0][2] == "NODE");  // As given.
}

TEST_CASE("older real outputs: SOC cells") {
  nlohmann::json k40 = Json(Topofit("topo --json '" + topofit::testing::RepoTopoFixturePath("k40m-4-soc-mlx4.txt") + "'"));
  CHECK(k40["links"][0][2] == "SYS");
  CHECK(k40["gpu_nic_links"][3][0] == "PHB");
}

TEST_CASE("--profile and --list-profiles") {
  Run list = Topofit("topo --list-profiles");
  REQUIRE(list.status == 0);
  for (const auto& p : topofit::ListProfiles()) {
    CAPTURE(p.name);
    CHECK(list.out.find(p.name) != std::string::npos);
  }
  nlohmann::json h100 = Json(Topofit("topo --profile hgx-h100-8 --json"));
  CHECK(h100["gpu_count"] == 8);
  CHECK(h100["nic_count"] == 8);
  CHECK(h100["links"][0][7] == "NV18");
  CHECK(h100["nearest_nics"][5] == nlohmann::json::array({"NIC5"}));
  nlohmann::json generic = Json(Topofit("topo --profile generic-pcie-12 --json"));
  CHECK(generic["gpu_count"] == 12);
  CHECK(generic["links"][3][11] == "NODE");
  CHECK(generic["best_sets"]["12"].size() == 12);

  Run unknown = Topofit("topo --profile dgx-9000");
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("unknown profile 'dgx-9000'") != std::string::npos);
  CHECK(unknown.err.find("hgx-a100-8") != std::string::npos);

  Run neither = Topofit("topo");
  CHECK(neither.status == 2);
}

}  // namespace
