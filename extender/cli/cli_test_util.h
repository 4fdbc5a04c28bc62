#pragma once
// Test helpers that run the built `topofit` binary (TOPOFIT_BINARY): through the shell, capturing its
// exit status, stdout and stderr; or as `topofit node`'s test build (TOPOFIT_NODE_TESTING_BINARY, with
// --fake-backend and --pods-file) on an ephemeral loopback port. `topofit serve` as a process is
// testing::ServeProcess (test/util/serve_process.h); temporary paths are testing::TempDir (test/util/temp_dir.h).
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/files.h"
#include "test/util/temp_dir.h"
#include "test/util/topofit_process.h"

namespace topofit::cli::testing {

using topofit::testing::TempDir;

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `<prefix> <binary> <args>` through the shell (trusted test strings), capturing stdout and stderr.
inline Run RunBinary(const std::string& binary, const std::string& args, const std::string& prefix = "") {
  TempDir dir("topofit-cli");
  const std::string err_path = dir.File("stderr");
  std::string cmd = prefix + " '" + binary + "' " + args + " 2>'" + err_path + "'";
  Run r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto err = ReadFile(err_path);
  r.err = err.ok() ? *err : err.error();
  return r;
}

// Runs `<prefix> topofit <args>`.
inline Run Topofit(const std::string& args, const std::string& prefix = "") {
  return RunBinary(TOPOFIT_BINARY, args, prefix);
}

// Runs `<prefix> topofit-node-testing <args>`.
inline Run TopofitNodeTesting(const std::string& args, const std::string& prefix = "") {
  return RunBinary(TOPOFIT_NODE_TESTING_BINARY, args, prefix);
}

// `topofit-node-testing node --ops-listen 127.0.0.1:0` (`topofit node`'s test build) with the fake
// backend (`topo`), no pods (an empty --pods-file) and no kubelet or PodResources, in a temporary
// device-plugin directory (under /tmp: unix socket paths are short); the ops port comes from its log
// line `ops=127.0.0.1:PORT`. Killed
// (SIGKILL) when it goes out of scope.
struct NodeProcess {
  TempDir dir{"tfc", "/tmp"};
  topofit::testing::TopofitProcess process;
  int port = 0;

  explicit NodeProcess(const std::string& topo)
      : process(TOPOFIT_NODE_TESTING_BINARY,
                {"node", "--node-name", "n1", "--device-plugin-dir", dir.path(), "--pod-resources-socket", "",
                 "--pods-file", dir.Write("pods.json", R"({"kind":"PodList","items":[]})"), "--fake-backend", topo,
                 "--ops-listen", "127.0.0.1:0"},
                dir.File("log")) {
    port = process.WaitForLoggedPort("ops", std::chrono::seconds(20));
    REQUIRE_MESSAGE(port > 0, process.log());
  }
  std::string log() const { return process.log(); }
};

}  // namespace topofit::cli::testing
