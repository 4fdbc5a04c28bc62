// Preempt: the fewest, lowest-priority victims that really free a good enough set.
#include "extender/placement/preemption.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "extender/placement/testing/placement_fixture.h"

namespace topofit::placement {
namespace {

using namespace testing;

struct Fixture : PlacementFixture {
  Fixture() : PlacementFixture({{"dgx", 8, "dgx1-v100"}, {"pcie", 4, "pcie-4-single-socket"}}) {
    model.ApplyPod(MakePod("v1", 2, "dgx", "0,1", 1));
    model.ApplyPod(MakePod("v2", 2, "dgx", "2,3", 5));
    model.ApplyPod(MakePod("v3", 2, "dgx", "4,5", 1));
    model.ApplyPod(MakePod("v4", 2, "dgx", "6,7", 10));
    model.ApplyPod(MakePod("w1", 4, "pcie", "0,1,2,3", 1));
  }
  std::vector<VictimCandidate> All() { return {{"v1", 1}, {"v2", 5}, {"v3", 1}, {"v4", 10}}; }
};

TEST_CASE("preempt: one low-priority victim is enough for 2 GPUs") {
  Fixture f;
  auto out = Preempt(f.pipeline, Request("p", 2, {}, 100), {{"dgx", f.All()}});
  REQUIRE(out.victims.count("dgx"));
  CHECK(out.victims["dgx"] == std::vector<std::string>{"v1"});
}

TEST_CASE("preempt: a required NVLink quad needs the two victims on one quad - lowest priorities") {
  Fixture f;
  auto out = Preempt(f.pipeline, Request("p", 4, Required(), 100), {{"dgx", f.All()}});
  REQUIRE(out.victims.count("dgx"));
  // {v1, v3} would free 4 GPUs but no NVLink quad; {v1, v2} (max priority 5) beats {v3, v4} (10).
  CHECK(out.victims["dgx"] == std::vector<std::string>{"v2", "v1"});  // Decreasing priority.
}

TEST_CASE("preempt: nodes where even every victim would not help are dropped - so are unknown nodes") {
  Fixture f;
  NodeVictims cands{{"pcie", {{"w1", 1}}}, {"ghost", {{"x", 0}}}, {"dgx", f.All()}};
  auto out = Preempt(f.pipeline, Request("p", 2, Required(), 100), cands);
  CHECK_FALSE(out.victims.count("pcie"));
  CHECK_FALSE(out.victims.count("ghost"));
  CHECK(out.victims.count("dgx"));
  // Too few victims offered on the DGX for 8 GPUs.
  auto few = Preempt(f.pipeline, Request("p", 8, {}, 100), {{"dgx", {{"v1", 1}, {"v2", 5}}}});
  CHECK(few.victims.empty());
}

TEST_CASE("preempt: victims holding no GPU are kept as the scheduler chose them") {
  Fixture f;
  std::vector<VictimCandidate> cands = f.All();
  cands.push_back({"cpu-only", 3});
  auto out = Preempt(f.pipeline, Request("p", 2, {}, 100), {{"dgx", cands}});
  CHECK(out.victims["dgx"] == std::vector<std::string>{"cpu-only", "v1"});
}

TEST_CASE("preempt: meta victims take their priority from the model - empty lists are filled") {
  Fixture f;
  std::vector<VictimCandidate> meta{{"v4", std::nullopt}, {"v3", std::nullopt}};
  auto out = Preempt(f.pipeline, Request("p", 2, {}, 100), {{"dgx", meta}});
  CHECK(out.victims["dgx"] == std::vector<std::string>{"v3"});
  auto filled = Preempt(f.pipeline, Request("p", 2, {}, 100), {{"dgx", {}}});
  REQUIRE(filled.victims["dgx"].size() == 1);
  CHECK((filled.victims["dgx"][0] == "v1" || filled.victims["dgx"][0] == "v3"));
  // Only pods of lower priority than the preemptor are offered.
  auto none = Preempt(f.pipeline, Request("p", 2, {}, 1), {{"dgx", {}}});
  CHECK(none.victims.empty());
}

TEST_CASE("preempt: read-only") {
  Fixture f;
  auto before = f.model.Node("dgx")->free;
  (void)Preempt(f.pipeline, Request("p", 4, Required(), 100), {{"dgx", f.All()}});
  CHECK(f.model.Node("dgx")->free == before);
  CHECK(f.model.Node("dgx")->pods.size() == 4);
}

TEST_CASE("preempt: a victim already terminating frees its GPUs without another eviction, and is not returned") {
  Fixture f;
  // v1 (GPUs 0,1) is being deleted: it still holds them (nothing is planned there), but it is leaving.
  k8s::PodObject v1 = MakePod("v1", 2, "dgx", "0,1", 1);
  v1.meta.deleting = true;
  f.model.ApplyPod(v1);
  CHECK(f.model.Node("dgx")->free.empty());
  auto out = Preempt(f.pipeline, Request("p", 2, {}, 100), {{"dgx", f.All()}});
  REQUIRE(out.victims.count("dgx"));
  CHECK(out.victims["dgx"].empty());  // Wait for v1; evict nobody.
  // 4 GPUs: v1's two plus the one lowest-priority victim that completes a good set.
  out = Preempt(f.pipeline, Request("q", 4, {}, 100), {{"dgx", f.All()}});
  REQUIRE(out.victims.count("dgx"));
  CHECK(std::find(out.victims["dgx"].begin(), out.victims["dgx"].end(), "v1") == out.victims["dgx"].end());
  CHECK(out.victims["dgx"].size() == 1);
}

}  // namespace
}  // namespace topofit::placement
