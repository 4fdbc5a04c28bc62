#pragma once
// Test helpers that run the built `topofit` binary (TOPOFIT_BINARY): through the shell, capturing its
// exit status, stdout and stderr; or as `topofit serve` on an ephemeral loopback port; and `topofit
// node`'s test build (TOPOFIT_NODE_TESTING_BINARY, with --fake-backend and --pods-file).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "base/files.h"

namespace topofit::cli::testing {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

// A fresh file name under TMPDIR (the file exists and is empty).
inline std::string TempPath(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/topofit-cli-XXXXXX" + suffix;
  int fd = mkstemps(tmpl.data(), static_cast<int>(std::string(suffix).size()));
  REQUIRE(fd >= 0);
  close(fd);
  return tmpl;
}

// Runs `<prefix> <binary> <args>` through the shell (trusted test strings), capturing stdout and stderr.
inline Run RunBinary(const std::string& binary, const std::string& args, const std::string& prefix = "") {
  std::string err_path = TempPath(".err");
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
  std::remove(err_path.c_str());
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

// The file's text, "" when it cannot be read (yet).
inline std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

// Starts `binary` (TOPOFIT_BINARY by default) with `args` (argv[0] first), its stdout on /dev/null and
// its stderr on `log_fd` (closed here, in the parent); returns the child's pid.
inline pid_t SpawnTopofit(std::vector<std::string> args, int log_fd, const char* binary = TOPOFIT_BINARY) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(log_fd, 2);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execv(binary, argv.data());
    _exit(127);
  }
  close(log_fd);
  return pid;
}

// The PORT of the first `<key>=127.0.0.1:PORT` in the log at `log_path`, polled for up to 20 s; 0 when
// it never appears.
inline int WaitForLoggedPort(const std::string& log_path, const std::string& key) {
  const std::string marker = key + "=127.0.0.1:";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string log = Slurp(log_path);
    size_t at = log.find(marker);
    if (at != std::string::npos) return std::atoi(log.c_str() + at + marker.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// SIGKILL and reap; nothing for pid <= 0.
inline void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// `topofit serve --listen 127.0.0.1:0 [extra...]` on its embedded demo cluster, its stderr in a temp
// file; the port comes from its log line `listen=127.0.0.1:PORT`. Killed when it goes out of scope.
struct ServeProcess {
  using Clock = std::chrono::steady_clock;
  pid_t pid = -1;
  std::string log_path;
  int port = 0;

  explicit ServeProcess(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"topofit", "serve", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    const char* dir = std::getenv("TMPDIR");
    log_path = std::string(dir && *dir ? dir : "/tmp") + "/topofit-serve-XXXXXX";
    int fd = mkstemp(log_path.data());
    REQUIRE(fd >= 0);
    pid = SpawnTopofit(std::move(args), fd);
    port = WaitForLoggedPort(log_path, "listen");
    REQUIRE_MESSAGE(port > 0, Slurp(log_path));
  }
  ~ServeProcess() {
    KillAndReap(pid);
    unlink(log_path.c_str());
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // Waits up to `limit` for the process to exit; returns its wait status, or -1 on timeout.
  int WaitExit(std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

// `topofit-node-testing node --ops-listen 127.0.0.1:0` (`topofit node`'s test build) with the fake
// backend (`topo`), no pods (an empty --pods-file) and no kubelet or PodResources, in a temporary
// device-plugin directory; the ops port comes from its log line `ops=127.0.0.1:PORT`. Killed
// (SIGKILL) when it goes out of scope.
struct NodeProcess {
  pid_t pid = -1;
  std::string dir;
  int port = 0;

  explicit NodeProcess(const std::string& topo) {
    char tmpl[] = "/tmp/tfc-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    {
      FILE* pods = std::fopen((dir + "/pods.json").c_str(), "w");
      REQUIRE(pods != nullptr);
      std::fputs(R"({"kind":"PodList","items":[]})", pods);
      std::fclose(pods);
    }
    std::vector<std::string> args = {"topofit-node-testing", "node", "--node-name", "n1", "--device-plugin-dir", dir,
                                     "--pod-resources-socket", "", "--pods-file", dir + "/pods.json",
                                     "--fake-backend", topo, "--ops-listen", "127.0.0.1:0"};
    int fd = ::open((dir + "/log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    pid = SpawnTopofit(std::move(args), fd, TOPOFIT_NODE_TESTING_BINARY);
    port = WaitForLoggedPort(dir + "/log", "ops");
    REQUIRE_MESSAGE(port > 0, Slurp(dir + "/log"));
  }
  ~NodeProcess() {
    KillAndReap(pid);
    std::string cmd = "rm -rf '" + dir + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot remove %s\n", dir.c_str());
  }
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;
  std::string log() const { return Slurp(dir + "/log"); }
};

}  // namespace topofit::cli::testing
