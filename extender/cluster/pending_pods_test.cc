#include "extender/cluster/pending_pods.h"

#include <doctest/doctest.h>

#include "extender/cluster/testing/builders.h"

namespace topofit::cluster {
namespace {

using namespace std::chrono_literals;
using testing::Request;

TEST_CASE("pending pods: put - get - erase by UID") {
  FakeClock clock;
  PendingPods cache(&clock);
  cache.Put(Request("a", 2));
  auto got = cache.Get("a");
  REQUIRE(got);
  CHECK(got->gpus == 2);
  CHECK_FALSE(cache.Get("b"));
  cache.Erase("a");
  CHECK_FALSE(cache.Get("a"));
  CHECK(cache.size() == 0);
}

TEST_CASE("pending pods: entries expire after the TTL - a new Put refreshes them") {
  FakeClock clock;
  PendingPods cache(&clock, 100, 10min);
  cache.Put(Request("a", 1));
  clock.Advance(9min);
  cache.Put(Request("a", 1));
  clock.Advance(9min);
  CHECK(cache.Get("a"));
  clock.Advance(1min);
  CHECK_FALSE(cache.Get("a"));
}

TEST_CASE("pending pods: bounded - the oldest goes first") {
  FakeClock clock;
  PendingPods cache(&clock, 3, 10min);
  for (int i = 0; i < 5; ++i) cache.Put(Request("p" + std::to_string(i), 1));
  CHECK(cache.size() == 3);
  CHECK_FALSE(cache.Get("p0"));
  CHECK_FALSE(cache.Get("p1"));
  CHECK(cache.Get("p4"));
}

}  // namespace
}  // namespace topofit::cluster
