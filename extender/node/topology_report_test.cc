#include "extender/node/topology_report.h"

#include <doctest/doctest.h>

#include "topology/fixture_test_util.h"

namespace topofit::node {
namespace {

std::string Fixture(const std::string& name) { return testing::ReadTopoFixture(name); }
std::string Testdata(const std::string& name) {
  auto text = ReadFile(std::string(TOPOFIT_SOURCE_DIR) + "/extender/node/testdata/" + name);
  return text.ok() ? *text : std::string();
}

const char* kTwoIds = "0, GPU-aaa, 00000000:01:00.0\n1, GPU-bbb, 00000000:02:00.0\n";

TEST_CASE("Sha256Hex matches the known digest of 'abc'") {
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("BuildTopologyReport keeps the matrix text, orders UUIDs by index, hashes both") {
  std::string topo = Fixture("rtx5090-2-phb.txt");
  REQUIRE(!topo.empty());
  auto report = BuildTopologyReport(topo, "1, GPU-bbb, 00000000:02:00.0\n0, GPU-aaa, 00000000:01:00.0\n");
  REQUIRE(report.ok());
  CHECK(report->gpu_count == 2);
  CHECK(report->uuids == "GPU-aaa,GPU-bbb");
  CHECK(report->topology.back() != '\n');
  CHECK(report->hash.size() == 64);
  auto annotations = report->Annotations();
  CHECK(annotations.at(kTopologyAnnotation) == report->topology);
  CHECK(annotations.at(kHashAnnotation) == report->hash);
  // Same content, same hash; other UUIDs, other hash.
  CHECK(BuildTopologyReport(topo + "\n\n", kTwoIds)->hash == report->hash);
  CHECK(BuildTopologyReport(topo, "0, GPU-aaa, x\n1, GPU-ccc, y\n")->hash != report->hash);
}

TEST_CASE("BuildTopologyReport refuses garbage with the parser's position") {
  ReportFailure failure;
  auto report = BuildTopologyReport("GPU0 GPU1 ?? not a matrix\nGPU0 banana\n", kTwoIds, &failure);
  REQUIRE(!report.ok());
  CHECK(failure == ReportFailure::kTopology);
  CHECK(report.error().find("line ") == 0);
}

TEST_CASE("BuildTopologyReport refuses GPU lists that disagree with the matrix") {
  std::string topo = Fixture("rtx5090-2-phb.txt");
  ReportFailure failure;
  CHECK(!BuildTopologyReport(topo, "0, GPU-aaa, 00000000:01:00.0\n", &failure).ok());
  CHECK(failure == ReportFailure::kUuids);
  CHECK(!BuildTopologyReport(topo, "0, GPU-aaa, x\n0, GPU-bbb, y\n").ok());
  CHECK(!BuildTopologyReport(topo, "0, GPU-aaa\n1, GPU-bbb\n").ok());
  CHECK(!BuildTopologyReport(topo, "0, GPU-aaa, x\n7, GPU-bbb, y\n").ok());
}

TEST_CASE("BuildTopologyReport reads real nvidia-smi output: index, UUID and PCI bus id") {
  // testdata/README.md: both files verbatim from one H100 machine.
  std::string topo = Testdata("h100-1gpu-topo-m.txt");
  std::string csv = Testdata("h100-1gpu-query-gpu.csv");
  REQUIRE(!topo.empty());
  REQUIRE(!csv.empty());
  auto report = BuildTopologyReport(topo, csv);
  REQUIRE_MESSAGE(report.ok(), report.error());
  CHECK(report->gpu_count == 1);
  CHECK(report->uuids == "GPU-a122a93b-af46-5c47-6e46-4b8a1ad68a94");
  CHECK(report->pci_bus_ids == "00000000:00:06.0");
  auto annotations = report->Annotations();
  CHECK(annotations.at(kUuidsAnnotation) == report->uuids);
  CHECK(annotations.at(kPciBusIdsAnnotation) == "00000000:00:06.0");
  // The terminal escapes around the header row are not published.
  CHECK(topo.find('\x1b') != std::string::npos);
  CHECK(report->topology.find('\x1b') == std::string::npos);
  CHECK(report->topology.find("GPU0\tCPU Affinity") != std::string::npos);
}

TEST_CASE("BuildTopologyReport orders PCI bus ids by index and hashes them") {
  std::string topo = Fixture("rtx5090-2-phb.txt");
  auto a = BuildTopologyReport(topo, "1, GPU-bbb, 00000000:02:00.0\n0, GPU-aaa, 00000000:01:00.0\n");
  REQUIRE(a.ok());
  CHECK(a->pci_bus_ids == "00000000:01:00.0,00000000:02:00.0");
  auto b = BuildTopologyReport(topo, "0, GPU-aaa, 00000000:03:00.0\n1, GPU-bbb, 00000000:02:00.0\n");
  REQUIRE(b.ok());
  CHECK(b->hash != a->hash);
  ReportFailure failure;
  CHECK(!BuildTopologyReport(topo, "0, GPU-aaa, \n1, GPU-bbb, 00000000:02:00.0\n", &failure).ok());
  CHECK(failure == ReportFailure::kUuids);
}

}  // namespace
}  // namespace topofit::node
