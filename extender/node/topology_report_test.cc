#include "extender/node/topology_report.h"

#include <doctest/doctest.h>

#include "topology/fixture_test_util.h"

namespace topofit::node {
namespace {

std::string Fixture(const std::string& name) { return testing::ReadTopoFixture(name); }

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

}  // namespace
}  // namespace topofit::node
