// `topofit node` as a process: bad flags and inputs are clear errors (exit 2, or 1 when it cannot
// start); its test hooks are in its test build alone (topofit-node-testing), which with --fake-backend
// and --pods-file serves its sockets in the given directory with no cluster and no kubelet, and stops
// cleanly on SIGTERM.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <httplib.h>

#include "extender/cli/cli_test_util.h"

namespace {

using topofit::cli::testing::NodeProcess;
using topofit::cli::testing::TempDir;
using topofit::cli::testing::Topofit;
using topofit::cli::testing::TopofitNodeTesting;

TEST_CASE("topofit node: the test hooks are in the test build alone, with the same settings") {
  auto shipped = Topofit("node --help");
  REQUIRE(shipped.status == 0);
  CHECK(shipped.out.find("--registrar-socket TEXT=topofit-registrar.sock") != std::string::npos);
  CHECK(shipped.out.find("--ops-listen") != std::string::npos);
  for (const char* hook : {"--fake-backend", "--pods-file"}) {
    CAPTURE(std::string(hook));
    CHECK(shipped.out.find(hook) == std::string::npos);
  }
  auto testing = TopofitNodeTesting("node --help");
  REQUIRE(testing.status == 0);
  CHECK(testing.out.find("--fake-backend") != std::string::npos);
  CHECK(testing.out.find("--pods-file") != std::string::npos);
  // Every flag of the shipped command, with its default, is in the test build's.
  for (size_t at = shipped.out.find("\n  --"); at != std::string::npos; at = shipped.out.find("\n  --", at + 1)) {
    std::string line = shipped.out.substr(at + 1, shipped.out.find('\n', at + 1) - at - 1);
    std::string flag = line.substr(0, line.find("  ", 2));
    CAPTURE(flag);
    CHECK(testing.out.find(flag) != std::string::npos);
  }
  auto agent = Topofit("agent --once");  // Folded into `topofit node`.
  CHECK(agent.status == 2);
  CHECK(agent.err.find("not expected") != std::string::npos);
}

TEST_CASE("topofit node: bad flags and inputs are clear errors") {
  auto r = Topofit("node", "env -u NODE_NAME");
  CHECK(r.status == 2);
  CHECK(r.err.find("no node name: pass --node-name or set NODE_NAME") != std::string::npos);
  r = Topofit("node --node-name n1 --preferred-timeout 0s");
  CHECK(r.status == 2);
  CHECK(r.err.find("--preferred-timeout: invalid duration") != std::string::npos);
  r = Topofit("node --node-name n1 --get-timeout soon");
  CHECK(r.status == 2);
  r = TopofitNodeTesting("node --node-name n1 --pods-file /nonexistent/pods.json --device-plugin-dir /tmp");
  CHECK(r.status == 1);
  CHECK(r.err.find("cannot start") != std::string::npos);
  CHECK(r.err.find("/nonexistent/pods.json") != std::string::npos);
}

TEST_CASE("topofit-node-testing: --fake-backend and --pods-file serve the sockets with no cluster, SIGTERM stops it") {
  TempDir tmp("tfc", "/tmp");  // Short: the device-plugin sockets go in it.
  const std::string& dir = tmp.path();
  tmp.Write("pods.json", R"({"kind":"PodList","items":[]})");
  std::string topo = std::string(TOPOFIT_SOURCE_DIR) + "/topology/testdata/topo/h100-8-nv18-8nic.txt";
  std::string cmd = "'" + std::string(TOPOFIT_NODE_TESTING_BINARY) + "' node --node-name n1 --device-plugin-dir " + dir +
                    " --pod-resources-socket '' --pods-file " + dir + "/pods.json --fake-backend " + topo +
                    " 2>" + dir + "/log & pid=$!; for i in $(seq 50); do [ -S " + dir +
                    "/topofit-nvidia-gpu.sock ] && [ -S " + dir + "/topofit-fake-gpu.sock ] && break; sleep 0.1; done; " +
                    "ls " + dir + "; kill -TERM $pid; wait $pid; echo rc=$?";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  CHECK(out.find("topofit-registrar.sock") != std::string::npos);
  CHECK(out.find("topofit-nvidia-gpu.sock") != std::string::npos);
  CHECK(out.find("topofit-fake-gpu.sock") != std::string::npos);
  CHECK(out.find("rc=0") != std::string::npos);
  std::ifstream log(dir + "/log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(text.find("msg=\"backend registered\"") != std::string::npos);
  CHECK(text.find("msg=\"serving\"") != std::string::npos);
  // Its sockets are gone after it stopped.
  CHECK_FALSE(std::filesystem::exists(dir + "/topofit-nvidia-gpu.sock"));
}

TEST_CASE("topofit node: --ops-listen serves /healthz, /readyz (what is missing) and /metrics") {
  NodeProcess node(std::string(TOPOFIT_SOURCE_DIR) + "/topology/testdata/topo/h100-8-nv18-8nic.txt");
  httplib::Client client("127.0.0.1", node.port);
  client.set_read_timeout(10, 0);
  auto health = client.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(health->body == "ok\n");
  // No kubelet here: never registered, so never ready; the body says so. Its fake backend is
  // connected and listed; without --pod-resources-socket no reconcile is required.
  // The fake backend registers a moment after the listener is up.
  auto ready = client.Get("/readyz");
  for (int i = 0; i < 200 && ready && ready->body.find("backend_") != std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ready = client.Get("/readyz");
  }
  REQUIRE(ready);
  CHECK(ready->status == 503);
  CHECK(ready->body == "kubelet_registered: not registered to kubelet as the device plugin yet\n");
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->get_header_value("Content-Type").find("text/plain; version=0.0.4") == 0);
  CHECK(metrics->body.find("\ntopofit_node_ready 0\n") != std::string::npos);
  CHECK(metrics->body.find("\ntopofit_node_kubelet_registered 0\n") != std::string::npos);
  CHECK(metrics->body.find("\ntopofit_node_gpus_by_health{health=\"healthy\"} 8\n") != std::string::npos);
  auto post = client.Post("/metrics", "", "text/plain");
  REQUIRE(post);
  CHECK(post->status == 405);
  auto other = client.Get("/api/v1/nodes");
  REQUIRE(other);
  CHECK(other->status == 404);
  CHECK(node.log().find("msg=\"ops endpoints serving\"") != std::string::npos);
}

TEST_CASE("topofit node: a bad or busy --ops-listen is a clear error") {
  auto r = TopofitNodeTesting("node --node-name n1 --pods-file /dev/null --ops-listen nowhere");
  CHECK(r.status == 1);
  CHECK(r.err.find("expected ADDR:PORT") != std::string::npos);
  NodeProcess first(std::string(TOPOFIT_SOURCE_DIR) + "/topology/testdata/topo/h100-8-nv18-8nic.txt");
  r = TopofitNodeTesting("node --node-name n1 --pods-file /dev/null --device-plugin-dir /tmp --ops-listen 127.0.0.1:" +
              std::to_string(first.port));
  CHECK(r.status == 1);
  CHECK(r.err.find("(--ops-listen)") != std::string::npos);
}

}  // namespace
