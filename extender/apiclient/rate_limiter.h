#pragma once
// TokenBucket: the client-side limit on requests to the API server, as client-go's token bucket
// (rest.Config QPS and Burst): `qps` tokens a second, at most `burst` saved up; each request takes
// one, waiting when none is left.
//
// Contract: Reserve() takes a token now or ahead of time and returns how long the caller must wait
// before using it (zero when one was free), so N concurrent callers are spread 1/qps apart in the
// order they reserved. qps <= 0 means no limit: Reserve() always returns zero. Thread-safe. The clock
// is injectable for tests; nothing here sleeps except Wait().

#include <chrono>
#include <functional>
#include <mutex>

namespace topofit::apiclient {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TokenBucket(double qps, int burst, std::function<Clock::time_point()> now = Clock::now);

  std::chrono::nanoseconds Reserve();
  // Reserve(), then sleeps for what it returned.
  void Wait();

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  const double qps_;
  const int burst_;
  const std::function<Clock::time_point()> now_;
  std::mutex mu_;
  double tokens_;          // May go negative: tokens reserved ahead of time.
  Clock::time_point last_;
};

}  // namespace topofit::apiclient
