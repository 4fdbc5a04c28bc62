// The per-container split of a pod's chosen GPUs, and the plan bind writes from it.
#include "extender/placement/container_plan.h"

#include <doctest/doctest.h>

namespace topofit::placement {
namespace {

using k8s::ContainerGpus;

ContainerGpus App(std::string name, int gpus) { return {std::move(name), gpus, false, false}; }
ContainerGpus Init(std::string name, int gpus) { return {std::move(name), gpus, true, false}; }
ContainerGpus Sidecar(std::string name, int gpus) { return {std::move(name), gpus, true, true}; }

TEST_CASE("split: one container gets the whole set") {
  auto s = SplitAmongContainers({App("c", 4)}, GpuSet::Of({1, 3, 4, 6}));
  REQUIRE(s.ok());
  REQUIRE(s->size() == 1);
  CHECK((*s)[0].first == "c");
  CHECK((*s)[0].second == GpuSet::Of({1, 3, 4, 6}));
}

TEST_CASE("split: app containers get disjoint consecutive runs in spec order") {
  auto s = SplitAmongContainers({App("a", 1), App("b", 3)}, GpuSet::Of({0, 2, 5, 7}));
  REQUIRE(s.ok());
  CHECK((*s)[0].second == GpuSet::Of({0}));
  CHECK((*s)[1].second == GpuSet::Of({2, 5, 7}));
}

TEST_CASE("split: a regular init container reuses what the next containers are planned to take") {
  // kubelet: init gets 2, its devices go to the reuse pool, "a" takes 2 from the pool (exactly the
  // pool), "b" asks the plugin for 2 more.
  auto s = SplitAmongContainers({Init("init", 2), App("a", 2), App("b", 2)}, GpuSet::Of({4, 5, 6, 7}));
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  CHECK((*s)[0] == std::pair<std::string, GpuSet>{"init", GpuSet::Of({4, 5})});
  CHECK((*s)[1] == std::pair<std::string, GpuSet>{"a", GpuSet::Of({4, 5})});
  CHECK((*s)[2] == std::pair<std::string, GpuSet>{"b", GpuSet::Of({6, 7})});
}

TEST_CASE("split: an init container larger than the app containers sets the pod's size") {
  auto s = SplitAmongContainers({Init("warm", 4), App("a", 1)}, GpuSet::FirstN(4));
  REQUIRE(s.ok());
  CHECK((*s)[0].second == GpuSet::FirstN(4));
  CHECK((*s)[1].second == GpuSet::Of({0}));
}

TEST_CASE("split: a regular init container never takes a sidecar started before it") {
  // side holds 0 for the pod's life; init (2) runs beside it and takes 1,2; main reuses 1,2.
  auto s = SplitAmongContainers({Sidecar("side", 1), Init("init", 2), App("main", 2)}, GpuSet::FirstN(3));
  REQUIRE(s.ok());
  CHECK((*s)[0].second == GpuSet::Of({0}));
  CHECK((*s)[1].second == GpuSet::Of({1, 2}));
  CHECK((*s)[2].second == GpuSet::Of({1, 2}));
  // Long-lived containers never share.
  CHECK_FALSE((*s)[0].second.Intersects((*s)[2].second));
}

TEST_CASE("split: errors - wrong size, nameless containers, no GPU containers") {
  CHECK(SplitAmongContainers({App("a", 2)}, GpuSet::FirstN(3)).error() == "3 GPUs chosen but the containers need 2");
  CHECK(SplitAmongContainers({Init("i", 4), App("a", 1)}, GpuSet::FirstN(3)).error() ==
        "3 GPUs chosen but the containers need 4");
  CHECK(SplitAmongContainers({App("", 1)}, GpuSet::FirstN(1)).error() == "a GPU container has no name");
  CHECK(SplitAmongContainers({}, GpuSet::FirstN(1)).error() == "the pod has no container that requests GPUs");
}

TEST_CASE("plan: the split by UUID, with node and time - index-only without a UUID map") {
  std::vector<std::string> uuids = {"GPU-0", "GPU-1", "GPU-2", "GPU-3"};
  auto plan = MakeGpuPlan({App("a", 1), App("b", 2)}, GpuSet::Of({1, 2, 3}), "n1", uuids, 1700000000);
  REQUIRE(plan.ok());
  CHECK(k8s::EncodeGpuAssignment(*plan) ==
        R"({"v":1,"node":"n1","containers":{"a":["GPU-1"],"b":["GPU-2","GPU-3"]},"t":1700000000})");
  auto none = MakeGpuPlan({App("a", 1)}, GpuSet::Of({0}), "n1", {}, 0);
  CHECK(none.error() == "node n1 publishes no GPU UUIDs (index-only placement)");
  CHECK(!MakeGpuPlan({App("a", 2)}, GpuSet::Of({0}), "n1", uuids, 0).ok());
}

}  // namespace
}  // namespace topofit::placement
