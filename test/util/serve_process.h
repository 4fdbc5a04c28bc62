#pragma once
// ServeProcess: the built `topofit serve --listen 127.0.0.1:0 [args...]` (TOPOFIT_BINARY) for a test,
// on an ephemeral loopback port read from its "serving" log line (`listen=127.0.0.1:PORT`), its log in
// a TempDir; killed when it goes out of scope. Without --snapshot it serves the embedded demo cluster.
//
//   testing::ServeProcess serve({"--snapshot", snapshot});
//   httplib::Client client("127.0.0.1", serve.port());
//   CHECK(serve.Stop() == 0);                                // SIGTERM: drained, exit status 0
//
// Contract: the constructor fails the test (doctest REQUIRE, with the log) when no port is logged
// within 20 s. Needs TOPOFIT_BINARY defined (the test target's compile definition).

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "test/util/temp_dir.h"
#include "test/util/topofit_process.h"

namespace topofit::testing {

class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& args = {})
      : process_(TOPOFIT_BINARY, Argv(args), dir_.File("serve.log")) {
    port_ = process_.WaitForLoggedPort("listen", std::chrono::seconds(20));
    REQUIRE_MESSAGE(port_ > 0, process_.log());
  }

  int port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
  std::string log() const { return process_.log(); }
  // The PORT of its first log line `<key>=127.0.0.1:PORT` (e.g. "ops"), waited for up to `timeout`; 0 if none.
  int WaitForLoggedPort(std::string_view key, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return process_.WaitForLoggedPort(key, timeout);
  }
  // Waits up to `limit` for it to exit: its wait status, or -1.
  int WaitExit(std::chrono::milliseconds limit) { return process_.WaitExit(limit); }
  // SIGTERM, then up to 15 s: the exit code, or -1.
  int Stop() { return process_.Stop(std::chrono::seconds(15)); }

 private:
  static std::vector<std::string> Argv(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"serve", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  TempDir dir_{"topofit-serve"};
  TopofitProcess process_;
  int port_ = 0;
};

}  // namespace topofit::testing
