#pragma once
// WorkDeadline: when the work a thread does for one request must stop. The transport installs one on
// the thread that runs a handler (http_listener.h: the request's deadline and the listener's stop
// flag); code that may run long on hostile input - YAML conversion, a query over every node - asks
// WorkDeadline::Expired() now and then and gives up with that reason.
//
// Contract: a thread without an installed WorkDeadline never expires (tools, tests, start-up
// loading). Installations nest: the inner one rules until it is destroyed, then the outer one again.
// Expired() is cheap (a clock read and an atomic load): call it every few thousand steps, not every
// step. Work handed to another thread takes its deadline along: install Current()'s at() and
// cancelled() there. Nothing here throws or allocates.

#include <atomic>
#include <chrono>
#include <string_view>

namespace topofit {

class WorkDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  // Installs `at` and `cancelled` (null: never cancelled) for the calling thread until destroyed.
  WorkDeadline(Clock::time_point at, const std::atomic<bool>* cancelled)
      : at_(at), cancelled_(cancelled), outer_(current_) {
    current_ = this;
  }
  ~WorkDeadline() { current_ = outer_; }
  WorkDeadline(const WorkDeadline&) = delete;
  WorkDeadline& operator=(const WorkDeadline&) = delete;

  // Why the calling thread's work must stop, "" while it may go on.
  static std::string_view Expired() {
    const WorkDeadline* d = current_;
    if (d == nullptr) return {};
    if (d->cancelled_ != nullptr && d->cancelled_->load(std::memory_order_relaxed)) return kCancelled;
    if (Clock::now() >= d->at_) return kPassed;
    return {};
  }

  // The calling thread's innermost installation; null when it has none.
  static const WorkDeadline* Current() { return current_; }
  Clock::time_point at() const { return at_; }
  const std::atomic<bool>* cancelled() const { return cancelled_; }

  static constexpr std::string_view kCancelled = "stopped: the server is shutting down";
  static constexpr std::string_view kPassed = "stopped: the request's deadline passed";

 private:
  Clock::time_point at_;
  const std::atomic<bool>* cancelled_;
  const WorkDeadline* outer_;
  static inline thread_local const WorkDeadline* current_ = nullptr;
};

}  // namespace topofit
