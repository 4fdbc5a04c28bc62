#pragma once
// CpuBudget: how much CPU a kind of work (the queries: query_runner.h) may take on average - `cores`
// of CPU time per second of wall time, as a token bucket that holds at most one second's worth. Work
// is admitted while the bucket is not in debt and charged afterwards with the CPU it actually used, so
// one admitted piece may overdraw it; later pieces are refused until the refill has paid the debt.
// Over any long stretch the work takes at most `cores` plus what the pieces admitted at one moment
// overdraw (bounded by the caller's cap on concurrent work).
//
// Why a budget beside nice 19: nice ranks threads within their CPU cgroup, but CPU the queries burn is
// still the cgroup's - a container's CFS quota (the pod's CPU limit) is spent by it and then throttles
// the verbs too, and the cgroup's (or the session's autogroup's) share against other cgroups is used
// up, so the verbs wait behind other pods' work. A budget bounds what queries can take from the verbs
// however the kernel shares out the rest (docs/hostile-input.md measures both).
//
// Errors: none; a rate <= 0 admits nothing. Thread-safe. The clock is passed in for tests.

#include <time.h>

#include <algorithm>
#include <chrono>
#include <mutex>

namespace topofit::server {

// The CPU time the calling thread has used, in seconds: what a CpuBudget is charged with.
inline double ThisThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

class CpuBudget {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CpuBudget(double cores, Clock::time_point now = Clock::now()) : cores_(cores), tokens_(cores), at_(now) {}

  // Whether work may start now (the bucket is not in debt).
  bool Admit(Clock::time_point now = Clock::now()) {
    std::lock_guard<std::mutex> lock(mu_);
    Refill(now);
    return cores_ > 0 && tokens_ > 0;
  }
  // Charges `cpu_seconds` that admitted work used.
  void Charge(double cpu_seconds, Clock::time_point now = Clock::now()) {
    std::lock_guard<std::mutex> lock(mu_);
    Refill(now);
    tokens_ -= cpu_seconds;
  }
  double cores() const { return cores_; }

 private:
  void Refill(Clock::time_point now) {
    if (now <= at_) return;
    tokens_ = std::min(cores_, tokens_ + cores_ * std::chrono::duration<double>(now - at_).count());
    at_ = now;
  }

  const double cores_;
  std::mutex mu_;
  double tokens_;  // CPU seconds; at most one second's worth, negative in debt.
  Clock::time_point at_;
};

}  // namespace topofit::server
