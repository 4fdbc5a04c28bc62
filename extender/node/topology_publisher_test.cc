#include "extender/node/topology_publisher.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "extender/node/fake_node_publisher.h"
#include "extender/node/mig_listing.h"
#include "extender/node/topology_report.h"

namespace topofit::node {
namespace {

// Drives the publisher with testdata/fake-nvidia-smi, configured through its environment variables.
struct Rig {
  Rig() {
    fake.nodes["gpu-1"] = {{"keep.me/too", "yes"}};
    options.node_name = "gpu-1";
    options.nvidia_smi = std::string(TOPOFIT_SOURCE_DIR) + "/extender/node/testdata/fake-nvidia-smi";
    Use("dgx1-v100-hybrid-cube-mesh.txt");
    setenv("FAKE_SMI_MODE", "ok", 1);
    setenv("FAKE_SMI_UUID_SEED", "node1", 1);
    setenv("FAKE_SMI_MIG", "0", 1);
  }
  void Use(const std::string& fixture) {
    setenv("FAKE_SMI_TOPO", (std::string(TOPOFIT_FIXTURES_DIR) + "/topo/" + fixture).c_str(), 1);
  }
  PassOutcome Pass() {
    TopologyPublisher agent(options, fake, [this](LogLevel, std::string_view msg, const LogFields&) { logs.emplace_back(msg); });
    return agent.RunOnce();
  }
  std::map<std::string, std::string>& node() { return fake.nodes["gpu-1"]; }

  FakeNodePublisher fake;
  TopologyPublisherOptions options;
  std::vector<std::string> logs;
};

TEST_CASE("topology publisher: publishes topology, UUIDs and hash once, then skips while nothing changes") {
  Rig rig;
  CHECK(rig.Pass() == PassOutcome::kPublished);
  CHECK(rig.fake.patches == 1);
  CHECK(rig.node().at(kTopologyAnnotation).find("GPU7") != std::string::npos);
  CHECK(rig.node().at(kUuidsAnnotation).rfind("GPU-node1-0000,GPU-node1-0001,", 0) == 0);
  CHECK(rig.node().at(kHashAnnotation).size() == 64);
  CHECK(rig.node().at("keep.me/too") == "yes");
  REQUIRE(rig.fake.events.size() == 1);
  CHECK(rig.fake.events[0].reason == kReasonPublished);

  CHECK(rig.Pass() == PassOutcome::kUnchanged);
  CHECK(rig.Pass() == PassOutcome::kUnchanged);
  CHECK(rig.fake.patches == 1);
  CHECK(rig.fake.events.size() == 1);
}

TEST_CASE("topology publisher: MIG devices per GPU from nvidia-smi -L, re-published when they change") {
  Rig rig;
  REQUIRE(rig.Pass() == PassOutcome::kPublished);
  CHECK(rig.node().at(kMigUuidsAnnotation).empty());  // No MIG: the hash is as before the map existed.
  const std::string whole_hash = rig.node().at(kHashAnnotation);
  setenv("FAKE_SMI_MIG", "2", 1);
  CHECK(rig.Pass() == PassOutcome::kPublished);
  const std::string& mig = rig.node().at(kMigUuidsAnnotation);
  CHECK(mig.rfind("MIG-node1-0000-0,MIG-node1-0000-1;MIG-node1-0001-0,MIG-node1-0001-1;", 0) == 0);
  CHECK(std::count(mig.begin(), mig.end(), ';') == 7);
  CHECK(rig.node().at(kHashAnnotation) != whole_hash);
  CHECK(rig.Pass() == PassOutcome::kUnchanged);
  setenv("FAKE_SMI_MIG", "0", 1);  // MIG turned off: the map is cleared.
  CHECK(rig.Pass() == PassOutcome::kPublished);
  CHECK(rig.node().at(kMigUuidsAnnotation).empty());
  CHECK(rig.node().at(kHashAnnotation) == whole_hash);
}

TEST_CASE("topology publisher: re-publishes when the topology or the GPUs change") {
  Rig rig;
  REQUIRE(rig.Pass() == PassOutcome::kPublished);
  std::string first_hash = rig.node().at(kHashAnnotation);
  rig.Use("p4d-24xlarge.txt");
  CHECK(rig.Pass() == PassOutcome::kPublished);
  CHECK(rig.node().at(kHashAnnotation) != first_hash);
  CHECK(rig.node().at(kTopologyAnnotation).find("NV12") != std::string::npos);
  std::string second_hash = rig.node().at(kHashAnnotation);
  setenv("FAKE_SMI_UUID_SEED", "swapped", 1);  // A GPU board replaced: same matrix, new UUIDs.
  CHECK(rig.Pass() == PassOutcome::kPublished);
  CHECK(rig.node().at(kHashAnnotation) != second_hash);
  CHECK(rig.fake.patches == 3);
}

TEST_CASE("topology publisher: reports nvidia-smi failures as events and keeps the good annotation") {
  Rig rig;
  REQUIRE(rig.Pass() == PassOutcome::kPublished);
  auto good = rig.node();
  setenv("FAKE_SMI_MODE", "fail", 1);
  CHECK(rig.Pass() == PassOutcome::kFailed);
  CHECK(rig.node() == good);
  REQUIRE(rig.fake.events.size() == 2);
  CHECK(rig.fake.events[1].type == "Warning");
  CHECK(rig.fake.events[1].reason == kReasonUnavailable);
  CHECK(rig.fake.events[1].message.find("couldn't communicate with the NVIDIA driver") != std::string::npos);
  CHECK(!rig.logs.empty());
}

TEST_CASE("topology publisher: reports garbage output as TopologyParseError with the parser's position") {
  Rig rig;
  REQUIRE(rig.Pass() == PassOutcome::kPublished);
  auto good = rig.node();
  setenv("FAKE_SMI_MODE", "garbage", 1);
  CHECK(rig.Pass() == PassOutcome::kFailed);
  CHECK(rig.node() == good);
  REQUIRE(rig.fake.events.size() == 2);
  CHECK(rig.fake.events[1].reason == kReasonParseError);
  CHECK(rig.fake.events[1].message.find("line ") != std::string::npos);
}

TEST_CASE("topology publisher: reports a missing nvidia-smi and a failing API without patching") {
  Rig rig;
  rig.options.nvidia_smi = "/nonexistent/nvidia-smi";
  CHECK(rig.Pass() == PassOutcome::kFailed);
  REQUIRE(rig.fake.events.size() == 1);
  CHECK(rig.fake.events[0].reason == kReasonUnavailable);
  CHECK(rig.fake.events[0].message.find("cannot run") != std::string::npos);

  Rig api;
  api.fake.fail_writes = true;
  CHECK(api.Pass() == PassOutcome::kFailed);
  CHECK(api.fake.patches == 0);
  CHECK(!api.node().count(kHashAnnotation));
}

TEST_CASE("topology publisher: a long-running one sends one event per distinct failure, not one per interval") {
  Rig rig;
  setenv("FAKE_SMI_MODE", "fail", 1);
  TopologyPublisher agent(rig.options, rig.fake, [](LogLevel, std::string_view, const LogFields&) {});
  CHECK(agent.RunOnce() == PassOutcome::kFailed);
  CHECK(agent.RunOnce() == PassOutcome::kFailed);
  CHECK(rig.fake.events.size() == 1);
  setenv("FAKE_SMI_MODE", "garbage", 1);
  CHECK(agent.RunOnce() == PassOutcome::kFailed);
  CHECK(rig.fake.events.size() == 2);
  setenv("FAKE_SMI_MODE", "ok", 1);
  CHECK(agent.RunOnce() == PassOutcome::kPublished);
}

}  // namespace
}  // namespace topofit::node
