#include "extender/apiclient/rate_limiter.h"

#include <doctest/doctest.h>

namespace topofit::apiclient {
namespace {

using namespace std::chrono_literals;

TEST_CASE("token bucket: a burst is free, then requests are spread 1/qps apart, and idle time refills") {
  TokenBucket::Clock::time_point t{};
  TokenBucket bucket(10, 3, [&] { return t; });
  CHECK(bucket.Reserve() == 0ns);
  CHECK(bucket.Reserve() == 0ns);
  CHECK(bucket.Reserve() == 0ns);
  CHECK(bucket.Reserve() == 100ms);  // The 4th waits one token's time; the 5th two.
  CHECK(bucket.Reserve() == 200ms);
  t += 1s;  // 10 tokens' worth: the 2 owed are paid, the rest refills up to the burst of 3.
  CHECK(bucket.Reserve() == 0ns);
  CHECK(bucket.Reserve() == 0ns);
  CHECK(bucket.Reserve() == 0ns);
  CHECK(bucket.Reserve() == 100ms);
}

TEST_CASE("token bucket: qps <= 0 never limits, and a burst below 1 counts as 1") {
  TokenBucket none(0, 0);
  for (int i = 0; i < 1000; ++i) CHECK(none.Reserve() == 0ns);
  TokenBucket::Clock::time_point t{};
  TokenBucket one(2, 0, [&] { return t; });
  CHECK(one.burst() == 1);
  CHECK(one.Reserve() == 0ns);
  CHECK(one.Reserve() == 500ms);
}

}  // namespace
}  // namespace topofit::apiclient
