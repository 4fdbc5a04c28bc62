#pragma once
// ThreadCpuSeconds: the CPU time (user + system) a process's threads have used, summed by thread name,
// from /proc/PID/task/*/stat - what `top -H` shows, to say where a benchmark's CPU went (hostile_load:
// the server's verbs, ops and query threads, the load generator's own). Threads of one name are one
// entry ("verbs-work" is the 32 workers together). A thread that ends between two readings takes its
// time with it: meant for long-lived threads. A process or thread that is gone reads as nothing (an
// empty map, a missing entry), never an error. Not thread-safe only in that it reads /proc at the call.

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "base/files.h"

namespace topofit::bench {

inline std::map<std::string, double> ThreadCpuSeconds(pid_t pid) {
  std::map<std::string, double> by_name;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return by_name;
  const double tick = double(sysconf(_SC_CLK_TCK));
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    auto stat = ReadFile(dir + "/" + e->d_name + "/stat");
    if (!stat) continue;
    // "TID (NAME) STATE f4 ... f13 UTIME STIME ...": the name may hold spaces; fields count from its ')'.
    size_t open = stat->find('('), close = stat->rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    const char* p = stat->c_str() + close + 2;
    char* end = nullptr;
    for (int field = 3; field < 14; ++field) {  // Skip STATE .. field 13.
      p = std::strchr(p, ' ');
      if (!p) break;
      ++p;
    }
    if (!p) continue;
    double utime = std::strtod(p, &end), stime = std::strtod(end, nullptr);
    by_name[stat->substr(open + 1, close - open - 1)] += (utime + stime) / tick;
  }
  closedir(d);
  return by_name;
}

}  // namespace topofit::bench
