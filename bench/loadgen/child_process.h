#pragma once
// The memory and soak benches' `topofit serve` child: started with testing::TopofitProcess
// (test/util/topofit_process.h, the one spawner of topofit processes) on an ephemeral loopback port,
// its memory read from /proc (VmRSS: resident now; VmHWM: the peak resident size since it started).

#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test/util/topofit_process.h"

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

// The arguments of `topofit serve --listen 127.0.0.1:0 args...`.
inline std::vector<std::string> ServeArgs(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"serve", "--listen", "127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace topofit::bench
