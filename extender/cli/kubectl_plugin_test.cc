// `kubectl topofit`: the binary run under the name kubectl-topofit is the plugin, with kubectl's
// conventions for usage errors. Its calls through a real API server are tested in the e2e suite
// (test/e2e/tests/kubectl_plugin_test.go).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "extender/cli/cli_test_util.h"

namespace topofit::cli {
namespace {

// Runs the plugin through a kubectl-topofit symlink in a fresh directory.
testing::Run Plugin(const std::string& args) {
  testing::TempDir dir("topofit-plugin");
  std::string link = dir.File("kubectl-topofit");
  REQUIRE(symlink(TOPOFIT_BINARY, link.c_str()) == 0);
  return testing::RunBinary(link, args);
}

TEST_CASE("kubectl plugin: answers as kubectl topofit, with its four verbs") {
  auto help = Plugin("--help");
  CHECK(help.status == 0);
  CHECK(help.out.find("Usage: kubectl topofit") != std::string::npos);
  for (const char* verb : {"nodes", "explain", "pod", "groups"}) CHECK(help.out.find(verb) != std::string::npos);
}

TEST_CASE("kubectl plugin: usage errors exit 2, a missing kubeconfig exits 1, each saying why") {
  auto no_pod = Plugin("explain");
  CHECK(no_pod.status == 2);
  CHECK(no_pod.err.find("POD is required") != std::string::npos);
  auto bad_output = Plugin("nodes -o xml --kubeconfig /nonexistent");
  CHECK(bad_output.status == 2);
  CHECK(bad_output.err == "error: -o xml: expected table, json or yaml\n");
  auto bad_service = Plugin("nodes --service topofit-metrics --kubeconfig /nonexistent");
  CHECK(bad_service.status == 2);
  CHECK(bad_service.err.find("--service topofit-metrics: expected NAMESPACE/NAME:PORT") != std::string::npos);
  auto missing = Plugin("nodes --kubeconfig /nonexistent/config");
  CHECK(missing.status == 1);
  CHECK(missing.err.find("error: kubeconfig: cannot open /nonexistent/config") == 0);
}

}  // namespace
}  // namespace topofit::cli
