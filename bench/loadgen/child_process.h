#pragma once
// The memory and soak benches' `topofit serve` child: started with testing::TopofitProcess
// (test/util/topofit_process.h, the one spawner of topofit processes) on an ephemeral loopback port,
// its memory read from /proc (VmRSS: resident now; VmHWM: the peak resident size since it started).

#include <sys/types.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/files.h"
#include "test/util/topofit_process.h"

namespace topofit::bench {

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); -1 if unreadable.
inline long ProcStatusKb(pid_t pid, const std::string& field) {
  auto status = ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!status) return -1;
  size_t at = status->find("\n" + field + ":");
  if (at == std::string::npos) return -1;
  return std::strtol(status->c_str() + at + field.size() + 2, nullptr, 10);
}

// The arguments of `topofit serve --listen 127.0.0.1:0 args...`.
inline std::vector<std::string> ServeArgs(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"serve", "--listen", "127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace topofit::bench
