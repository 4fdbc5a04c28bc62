#pragma once
// TopofitProcess: a `topofit` child process - `topofit serve`, `topofit node` - for the tests and the
// load benches (bench/loadgen): its stdout on /dev/null, its stderr (the log) in a file, its ports
// read from its log lines; killed (SIGKILL) and reaped when the object goes. The one spawner of
// topofit processes; tests use ServeProcess (serve_process.h) on top of it. Header-only, POSIX.
//
// Contract: the constructor throws std::runtime_error when the log file cannot be made or fork
// fails; an exec failure is the child's exit status 127. Waits poll every 10-20 ms; nothing blocks
// without a limit.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace topofit::testing {

class TopofitProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Runs `binary` as `topofit args...`, its stderr in `log_path` (emptied first, so that what is read
  // from it is this process's).
  TopofitProcess(const std::string& binary, std::vector<std::string> args, std::string log_path)
      : log_path_(std::move(log_path)) {
    int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0) throw std::runtime_error("cannot create " + log_path_);
    args.insert(args.begin(), "topofit");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {  // Only async-signal-safe calls until execv.
      int devnull = ::open("/dev/null", O_WRONLY);
      dup2(log, 2);
      dup2(devnull, 1);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    ::close(log);
    if (pid_ < 0) throw std::runtime_error("cannot fork " + binary);
  }
  ~TopofitProcess() { Kill(); }
  TopofitProcess(const TopofitProcess&) = delete;
  TopofitProcess& operator=(const TopofitProcess&) = delete;

  // -1 once the process is reaped.
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  std::string log() const {
    std::ifstream in(log_path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // The PORT of the first `<key>=127.0.0.1:PORT` in the log ("listen", "ops"), polled until `timeout`;
  // 0 when it never appears or the process exits first.
  int WaitForLoggedPort(std::string_view key, std::chrono::milliseconds timeout) {
    const std::string marker = std::string(key) + "=127.0.0.1:";
    for (auto deadline = Clock::now() + timeout; Clock::now() < deadline;) {
      std::string text = log();
      if (size_t at = text.find(marker); at != std::string::npos) return std::atoi(text.c_str() + at + marker.size());
      if (Exited()) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

  // Whether it has exited (reaping it if so).
  bool Exited() {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
    return pid_ <= 0;
  }

  // Waits up to `limit` for it to exit: its wait status, or -1 when it is still running (or was
  // reaped before).
  int WaitExit(std::chrono::milliseconds limit) {
    for (auto deadline = Clock::now() + limit; pid_ > 0 && Clock::now() < deadline;) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

  // SIGTERM, then WaitExit(limit): the exit code, or -1 (still running, or ended by a signal).
  int Stop(std::chrono::milliseconds limit) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int status = WaitExit(limit);
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // SIGKILL and reap; nothing once reaped.
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace topofit::testing
