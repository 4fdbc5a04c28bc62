// A node whose `nvidia-smi topo -m` matrix is not one PCIe tree schedules on the matrix as given, and
// `topofit serve` says so where people look: the node's warnings in /api/v1/nodes and in explain,
// and one log line for the node.
#include <doctest/doctest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <string>

#include "extender/cli/cli_test_util.h"
#include "test/util/serve_process.h"
#include "test/util/temp_dir.h"

namespace {

using nlohmann::json;

// GPU0 and GPU2 each share a switch with GPU1, yet the matrix puts them at NODE (topology_test.cc).
constexpr const char* kNotATree =
    "        GPU0    GPU1    GPU2\\n"
    "GPU0     X      PIX     NODE\\n"
    "GPU1    PIX      X      PIX\\n"
    "GPU2    NODE    PIX      X\\n";

std::string Node(const std::string& name, const std::string& topology, int gpus) {
  return R"({"kind":"Node","metadata":{"name":")" + name + R"(","annotations":{"topofit.io/gpu-topology":")" + topology +
         R"("}},"status":{"allocatable":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":")" + std::to_string(gpus) + R"("}}})";
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("serve: a matrix that is not one PCIe tree is modelled as given and its warning shown in nodes, explain and the log") {
  topofit::testing::TempDir dir;
  const std::string snapshot = dir.Write(
      "snapshot.json", R"({"apiVersion":"v1","kind":"List","items":[)" + Node("as-given-1", kNotATree, 3) + "," +
                           Node("tree-1", "dgx1-v100", 8) + "]}");
  topofit::testing::ServeProcess serve({"--snapshot", snapshot});
  httplib::Client client("127.0.0.1", serve.port());

  auto nodes = client.Get("/api/v1/nodes");
  REQUIRE(nodes);
  json n = json::parse(nodes->body);
  REQUIRE(n["nodes"].size() == 2);
  for (const json& node : n["nodes"]) {
    if (node["name"] == "tree-1") {
      CHECK(node["warnings"].empty());
      continue;
    }
    CHECK(node["topologySource"] == "annotation-matrix");  // The matrix, not a fallback.
    CHECK(node["gpus"] == 3);
    REQUIRE(node["warnings"].size() == 1);
    CHECK(node["warnings"][0].get<std::string>().rfind(
              "topofit.io/gpu-topology (topo matrix): the matrix is not one PCIe tree: it says GPU0 and GPU2 are NODE", 0) == 0);
  }
  CHECK(n["totals"]["nodesWithWarnings"] == 1);

  auto explain = client.Post("/api/v1/explain",
                             R"({"metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[{"name":"c",)"
                             R"("resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})",
                             "application/json");
  REQUIRE(explain);
  REQUIRE(explain->status == 200);
  json e = json::parse(explain->body);
  bool seen = false;
  for (const json& node : e["nodes"]) {
    if (node["node"] != "as-given-1") {
      CHECK(node["warnings"].empty());
      continue;
    }
    seen = true;
    CHECK(node["result"] == "pass");
    REQUIRE(node["warnings"].size() == 1);
    CHECK(node["warnings"][0].get<std::string>().find("the matrix is not one PCIe tree") != std::string::npos);
  }
  CHECK(seen);

  // Logged once for the node (its inputs do not change), whatever the queries.
  const std::string log = serve.log();
  CHECK_MESSAGE(Count(log, "msg=\"node warning\" node=as-given-1") == 1, log);
  CHECK(log.find("the matrix is not one PCIe tree") != std::string::npos);
  CHECK(Count(log, "node=tree-1") == 0);
}
