#pragma once
// SetThreadRole: gives the calling thread a name (what /proc/PID/task/TID/comm, `top -H` and perf show)
// and a nice, for the server's threads of different roles: the verbs' listener, the ops listener, the
// queries at nice 19 (listener_options.h, query_runner.h).
//
// The name keeps its first 15 characters (the kernel's limit). The process's main thread keeps its
// name - it is the process's own in `ps` - and only its nice changes. Nice on Linux is per thread and
// inherited by threads created afterwards; a thread may always raise its own nice, so a nice that is
// refused (lowering it without CAP_SYS_NICE) leaves the thread as it was and is not an error. Nice 0
// leaves the nice untouched. Only ever changes the calling thread.

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

namespace topofit::server {

inline void SetThreadRole(const std::string& name, int nice) {
  if (gettid() != getpid()) pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  if (nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
}

}  // namespace topofit::server
