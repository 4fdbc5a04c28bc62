#pragma once
// ChildServe: a `topofit serve` process for the memory and soak benches - started with its stderr
// in a file, its ports read from its "serving" log line, its memory read from /proc (VmRSS: resident
// now; VmHWM: the peak resident size since it started). Killed when destroyed.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace topofit::bench {

inline std::string SlurpFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); -1 if unreadable.
inline long ProcStatusKb(pid_t pid, const std::string& field) {
  std::string status = SlurpFile("/proc/" + std::to_string(pid) + "/status");
  size_t at = status.find("\n" + field + ":");
  if (at == std::string::npos) return -1;
  return std::strtol(status.c_str() + at + field.size() + 2, nullptr, 10);
}

class ChildServe {
 public:
  // Runs `binary serve --listen 127.0.0.1:0 args...`, stderr to `log_path`.
  ChildServe(const std::string& binary, const std::vector<std::string>& args, std::string log_path)
      : log_path_(std::move(log_path)) {
    std::vector<std::string> argv{binary, "serve", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    // Emptied before the child starts: a port read from the log is this child's, never a stale one.
    close(open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    pid_ = fork();
    if (pid_ == 0) {
      int log = open(log_path_.c_str(), O_WRONLY | O_APPEND);
      dup2(log, 2);
      dup2(open("/dev/null", O_WRONLY), 1);
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execv(binary.c_str(), c.data());
      _exit(127);
    }
  }
  ~ChildServe() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string log() const { return SlurpFile(log_path_); }
  bool exited() {
    int status;
    if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
    return pid_ <= 0;
  }

  // The port of the verbs listener, once the "serving" line is logged; 0 after `timeout` or if it exited.
  int WaitListening(std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = log();
      if (size_t at = text.find("listen=127.0.0.1:"); at != std::string::npos) return std::atoi(text.c_str() + at + 17);
      if (exited()) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace topofit::bench
