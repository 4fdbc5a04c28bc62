#include "extender/cluster/expiring_lru.h"

#include <doctest/doctest.h>

namespace topofit::cluster {
namespace {

using namespace std::chrono_literals;

TEST_CASE("expiring lru: what leaves by capacity or age comes back from Put and Expire") {
  FakeClock clock;
  ExpiringLru<int> lru(/*capacity=*/2, /*ttl=*/10min);
  CHECK(lru.Put("a", 1, clock.Now()).empty());
  CHECK(lru.Put("b", 2, clock.Now()).empty());
  CHECK(lru.Put("a", 10, clock.Now()).empty());  // Replaced and refreshed: b is now the oldest.
  CHECK(lru.Put("c", 3, clock.Now()) == std::vector<int>{2});
  REQUIRE(lru.Find("a", clock.Now()));
  CHECK(*lru.Find("a", clock.Now()) == 10);
  CHECK_FALSE(lru.Find("b", clock.Now()));

  clock.Advance(10min);
  CHECK_FALSE(lru.Find("a", clock.Now()));  // Expired, not yet removed.
  CHECK(lru.size() == 2);
  CHECK(lru.Expire(clock.Now()) == std::vector<int>{10, 3});
  CHECK(lru.size() == 0);
  CHECK_FALSE(lru.Erase("a"));
  CHECK(lru.Put("d", 4, clock.Now()).empty());
  CHECK(lru.Erase("d") == 4);
}

}  // namespace
}  // namespace topofit::cluster
