#include "extender/apiclient/rate_limiter.h"

#include <algorithm>
#include <thread>

namespace topofit::apiclient {

TokenBucket::TokenBucket(double qps, int burst, std::function<Clock::time_point()> now)
    : qps_(qps), burst_(std::max(1, burst)), now_(std::move(now)), tokens_(std::max(1, burst)), last_(now_()) {}

std::chrono::nanoseconds TokenBucket::Reserve() {
  if (qps_ <= 0) return std::chrono::nanoseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point t = now_();
  const double elapsed = std::chrono::duration<double>(t - last_).count();
  last_ = t;
  tokens_ = std::min(double(burst_), tokens_ + elapsed * qps_);
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(int64_t(-tokens_ / qps_ * 1e9));
}

void TokenBucket::Wait() {
  const std::chrono::nanoseconds d = Reserve();
  if (d.count() > 0) std::this_thread::sleep_for(d);
}

}  // namespace topofit::apiclient
