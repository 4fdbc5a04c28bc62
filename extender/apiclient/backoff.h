#pragma once
// Backoff: exponential delays with jitter between reconnect attempts, so that many replicas (or a
// restarted API server's many clients) do not retry in lockstep.
//
// Next() returns a delay drawn uniformly from [d/2, d] where d doubles from `initial` up to `max`
// on each call; Reset() after a success starts again from `initial`. Not thread-safe (one per loop).

#include <algorithm>
#include <chrono>
#include <random>

namespace topofit::apiclient {

class Backoff {
 public:
  using ms = std::chrono::milliseconds;
  Backoff(ms initial, ms max) : initial_(initial), max_(max), current_(initial), rng_(std::random_device{}()) {}

  ms Next() {
    ms d = current_;
    current_ = std::min(max_, current_ * 2);
    std::uniform_int_distribution<int64_t> pick(d.count() / 2, std::max<int64_t>(d.count(), 1));
    return ms(pick(rng_));
  }
  void Reset() { current_ = initial_; }

 private:
  ms initial_, max_, current_;
  std::mt19937_64 rng_;
};

}  // namespace topofit::apiclient
