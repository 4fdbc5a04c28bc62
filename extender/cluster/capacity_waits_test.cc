#include "extender/cluster/capacity_waits.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "extender/cluster/clock.h"

namespace topofit::cluster {
namespace {

using namespace std::chrono_literals;

WaitingPod Pod(const std::string& uid, int gpus) { return WaitingPod{uid, "ns", "pod-" + uid, gpus}; }

std::vector<std::string> Uids(const std::vector<WaitingPod>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p.uid);
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("capacity waits: a freed node hands back the pods that now fit there, once") {
  FakeClock clock;
  CapacityWaits waits(&clock);
  waits.Note(Pod("a", 1), {"n1", "n2"});
  waits.Note(Pod("b", 4), {"n1"});
  waits.Note(Pod("c", 2), {"n2"});
  CHECK(waits.size() == 3);

  CHECK(Uids(waits.Freed("n1", 2)) == std::vector<std::string>{"a"});  // b wants 4
  // a is gone everywhere: n2 frees only c now.
  CHECK(Uids(waits.Freed("n2", 8)) == std::vector<std::string>{"c"});
  CHECK(waits.Freed("n2", 8).empty());
  auto b = waits.Freed("n1", 4);
  REQUIRE(b.size() == 1);
  CHECK(b[0].namespace_ == "ns");
  CHECK(b[0].name == "pod-b");
  CHECK(b[0].gpus == 4);
  CHECK(waits.size() == 0);
}

TEST_CASE("capacity waits: noted again, the latest nodes replace the earlier, Forget drops a pod") {
  FakeClock clock;
  CapacityWaits waits(&clock);
  waits.Note(Pod("a", 1), {"n1"});
  waits.Note(Pod("a", 1), {"n2"});
  CHECK(waits.size() == 1);
  CHECK(waits.Freed("n1", 8).empty());
  waits.Forget("a");
  CHECK(waits.Freed("n2", 8).empty());
  CHECK(waits.size() == 0);
}

TEST_CASE("capacity waits: not an error - unknown nodes and pods, empty uid or no nodes") {
  FakeClock clock;
  CapacityWaits waits(&clock);
  waits.Forget("nobody");
  CHECK(waits.Freed("nowhere", 8).empty());
  waits.Note(Pod("", 1), {"n1"});
  waits.Note(Pod("a", 1), {});
  CHECK(waits.size() == 0);
}

TEST_CASE("capacity waits: bounded - old entries expire, the least recently noted go first") {
  FakeClock clock;
  CapacityWaits waits(&clock, /*capacity=*/2, /*ttl=*/5min);
  waits.Note(Pod("a", 1), {"n1"});
  waits.Note(Pod("b", 1), {"n1"});
  waits.Note(Pod("c", 1), {"n1"});  // a goes
  CHECK(waits.size() == 2);
  CHECK(Uids(waits.Freed("n1", 8)) == std::vector<std::string>{"b", "c"});

  waits.Note(Pod("d", 1), {"n1"});
  clock.Advance(5min);
  CHECK(waits.Freed("n1", 8).empty());  // kube-scheduler has flushed it by now
  CHECK(waits.size() == 0);
}

}  // namespace
}  // namespace topofit::cluster
