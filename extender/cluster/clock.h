#pragma once
// Clock: where the model reads the time, so that reservation and pending-pod expiry can be tested
// without sleeping.
//
// Contract: Now() is monotonic (never goes back) and thread-safe. SystemClock is steady_clock.
// FakeClock starts at an arbitrary fixed point and moves only when a test calls Advance().

#include <atomic>
#include <chrono>

namespace topofit::cluster {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  // A process-wide instance for callers that do not inject one.
  static const Clock* Get() {
    static const SystemClock clock;
    return &clock;
  }
};

class FakeClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(ticks_.load(std::memory_order_acquire))); }
  void Advance(Duration d) { ticks_.fetch_add(d.count(), std::memory_order_acq_rel); }

 private:
  std::atomic<Duration::rep> ticks_{Duration(std::chrono::hours(1)).count()};
};

}  // namespace topofit::cluster
