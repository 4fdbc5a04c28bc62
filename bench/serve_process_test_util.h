#pragma once
// ServeProcess: the built `topofit serve` (TOPOFIT_BINARY) started on an ephemeral loopback port for a
// test, its stderr in a temp file; Stop() sends SIGTERM and waits. Used by the *_serve_test.cc files,
// which check the bench against a real served extender.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace topofit::bench::testing {

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A fresh empty file under TMPDIR.
inline std::string TempFile(const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/topofit-bench-XXXXXX" + suffix;
  int fd = mkstemps(path.data(), int(suffix.size()));
  REQUIRE(fd >= 0);
  close(fd);
  return path;
}

class ServeProcess {
 public:
  // `args` follow `topofit serve --listen 127.0.0.1:0`.
  explicit ServeProcess(const std::vector<std::string>& args) {
    log_path_ = TempFile(".log");
    std::vector<std::string> argv{"topofit", "serve", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      int log = open(log_path_.c_str(), O_WRONLY | O_TRUNC);
      dup2(log, 2);
      dup2(open("/dev/null", O_WRONLY), 1);
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execv(TOPOFIT_BINARY, c.data());
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline && port_ == 0) {
      std::string log = Slurp(log_path_);
      if (size_t at = log.find("listen=127.0.0.1:"); at != std::string::npos) port_ = std::atoi(log.c_str() + at + 17);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(port_ > 0, Slurp(log_path_));
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::remove(log_path_.c_str());
  }
  int port() const { return port_; }
  std::string log() const { return Slurp(log_path_); }
  // SIGTERM, then waits (up to 15 s); the exit status, or -1.
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 1500; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

}  // namespace topofit::bench::testing
