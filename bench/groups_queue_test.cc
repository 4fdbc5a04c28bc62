// The groups replay with a queue (groups_queue.h): every arrival counted once, waits as the contract
// says, no partly started gang, deterministic.
#include "bench/groups_queue.h"

#include <doctest/doctest.h>

namespace topofit::bench {
namespace {

GroupReplayOptions Small(double load, const std::string& mix = "multi-node") {
  GroupReplayOptions o;
  o.shape = "gb200-nvl72";
  o.mix = mix;
  o.load = load;
  o.churn_arrivals = 300;
  o.seed = 3;
  return o;
}

TEST_CASE("groups queue: every arrival started or still waiting, one wait each, and gangs never partly started") {
  for (double load : {0.5, 1.5}) {
    auto rows = RunGroupQueue(Small(load));
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 4);
    for (const GroupQueueRow& r : *rows) {
      CAPTURE(r.policy);
      CHECK(r.arrivals == 300);
      CHECK(r.started + r.waiting == r.arrivals);
      CHECK(static_cast<int>(r.waits.size()) == r.arrivals);
      CHECK(std::is_sorted(r.waits.begin(), r.waits.end()));
      CHECK(r.waits.front() >= 0);
      CHECK(r.waits.back() <= 300);
      if (r.policy != "no-gang") CHECK(r.partial_gpus == 0);
      if (r.policy != "no-gang") CHECK(r.idle_gpu_steps == 0);
      CHECK(r.steps == 300);
      size_t waits = 0;  // By job size: the same waits and waiting groups, split.
      int waiting = 0;
      for (const auto& [gpus, w] : r.by_size) {
        waits += w.waits.size();
        waiting += w.waiting;
        CHECK(std::is_sorted(w.waits.begin(), w.waits.end()));
        CHECK(w.waiting <= static_cast<int>(w.waits.size()));
      }
      CHECK(waits == r.waits.size());
      CHECK(waiting == r.waiting);
    }
  }
  GroupReplayOptions o = Small(1.5);
  o.by_size = true;
  auto rows = RunGroupQueue(o);
  REQUIRE(rows.ok());
  const std::string table = FormatGroupQueue(o, *rows);
  CHECK(table.find("waits by job size (arrivals)") != std::string::npos);
  CHECK(table.find("| jobs of 128 GPUs |") != std::string::npos);
}

TEST_CASE("groups queue: more load, longer waits, and a light load barely waits") {
  auto light = RunGroupQueue(Small(0.2, "helios-fit"));
  auto heavy = RunGroupQueue(Small(1.5));
  REQUIRE(light.ok());
  REQUIRE(heavy.ok());
  for (size_t p = 0; p < light->size(); ++p) {
    CAPTURE((*light)[p].policy);
    if ((*light)[p].policy != "no-gang") CHECK((*light)[p].WaitAt(0.9) == 0);
    CHECK((*heavy)[p].WaitAt(0.9) > 0);
    CHECK((*heavy)[p].WaitAt(0.9) >= (*light)[p].WaitAt(0.9));
  }
}

TEST_CASE("groups queue: the same seed gives the same rows") {
  auto a = RunGroupQueue(Small(0.9));
  auto b = RunGroupQueue(Small(0.9));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (size_t p = 0; p < a->size(); ++p) {
    CHECK((*a)[p].waits == (*b)[p].waits);
    CHECK((*a)[p].partial_gpus == (*b)[p].partial_gpus);
  }
  GroupReplayOptions bad = Small(0.9);
  bad.load = 0;
  CHECK_FALSE(RunGroupQueue(bad).ok());
}

}  // namespace
}  // namespace topofit::bench
