// The plan/actual annotation codec and the per-container GPU requests the pod decoder keeps.
#include "extender/k8s/gpu_plan.h"

#include <doctest/doctest.h>

#include "extender/k8s/object_decoder.h"

namespace topofit::k8s {
namespace {

TEST_CASE("gpu plan: the contract's example parses, and encodes back to the same text") {
  const std::string text =
      R"({"v":1,"node":"n1","containers":{"init":["GPU-a","GPU-b"],"trainer":["GPU-a","GPU-b"],"side":["GPU-c"]},"t":1700000000})";
  auto a = ParseGpuAssignment(text);
  REQUIRE_MESSAGE(a.ok(), a.error());
  CHECK(a->node == "n1");
  CHECK(a->unix_seconds == 1700000000);
  REQUIRE(a->containers.size() == 3);
  CHECK(a->containers[0].first == "init");  // Document order is kept.
  CHECK(a->containers[1].second == std::vector<std::string>{"GPU-a", "GPU-b"});
  CHECK(a->containers[2].first == "side");
  CHECK(a->AllUuids() == std::vector<std::string>{"GPU-a", "GPU-b", "GPU-c"});
  REQUIRE(a->Find("side") != nullptr);
  CHECK(*a->Find("side") == std::vector<std::string>{"GPU-c"});
  CHECK(a->Find("other") == nullptr);
  CHECK(EncodeGpuAssignment(*a) == text);
  auto again = ParseGpuAssignment(EncodeGpuAssignment(*a));
  REQUIRE(again.ok());
  CHECK(*again == *a);
}

TEST_CASE("gpu plan: spacing, unknown keys and a missing t are accepted - names are escaped on the way out") {
  auto a = ParseGpuAssignment(R"( { "containers" : { "c\"1" : [ "GPU-x" ] }, "node":"n", "v":1, "later":{"x":1} } )");
  REQUIRE_MESSAGE(a.ok(), a.error());
  CHECK(a->unix_seconds == 0);
  CHECK(a->containers[0].first == "c\"1");
  CHECK(EncodeGpuAssignment(*a) == R"({"v":1,"node":"n","containers":{"c\"1":["GPU-x"]},"t":0})");
}

TEST_CASE("gpu plan: malformed annotations are refused with what is wrong") {
  auto error = [](std::string_view text) {
    auto a = ParseGpuAssignment(text);
    return a.ok() ? std::string("(accepted)") : a.error();
  };
  CHECK(error("").find("invalid JSON") == 0);
  CHECK(error("[1]") == "expected an object");
  CHECK(error(R"({"node":"n","containers":{}})") == "v: missing (expected 1)");
  CHECK(error(R"({"v":2,"node":"n","containers":{}})") == "v: version 2 is not supported (only 1)");
  CHECK(error(R"({"v":"1","node":"n","containers":{}})") == "v: expected the integer 1");
  CHECK(error(R"({"v":1,"node":"","containers":{}})") == "node: missing or empty");
  CHECK(error(R"({"v":1,"node":"n"})") == "containers: missing");
  CHECK(error(R"({"v":1,"node":"n","containers":[]})") == "containers: expected an object");
  CHECK(error(R"({"v":1,"node":"n","containers":{"c":"GPU-a"}})") == "containers.c: expected an array of GPU UUIDs");
  CHECK(error(R"({"v":1,"node":"n","containers":{"c":["GPU-a",3]}})") == "containers.c[1]: expected a string");
  CHECK(error(R"({"v":1,"node":"n","containers":{"c":["GPU-a","GPU-a"]}})") == "containers.c[1]: GPU-a repeats");
  CHECK(error(R"({"v":1,"node":"n","containers":{"c":["GPU a"]}})") == "containers.c[0]: 'GPU a' is not a GPU UUID");
  CHECK(error(R"({"v":1,"node":"n","containers":{"c":["a,b"]}})") == "containers.c[0]: 'a,b' is not a GPU UUID");
  CHECK(error(R"({"v":1,"node":"n","containers":{"":["GPU-a"]}})").find("empty container name") != std::string::npos);
  CHECK(error(R"({"v":1,"node":7,"containers":{}})") == "node: expected a string");
}

TEST_CASE("gpu health: parses, encodes, refuses garbage") {
  auto h = ParseGpuHealth(R"({"v":1,"unhealthy":["GPU-b"],"t":5})");
  REQUIRE(h.ok());
  CHECK(h->unhealthy == std::vector<std::string>{"GPU-b"});
  CHECK(EncodeGpuHealth(*h) == R"({"v":1,"unhealthy":["GPU-b"],"t":5})");
  CHECK(ParseGpuHealth(R"({"v":1,"unhealthy":[]})").ok());
  CHECK(ParseGpuHealth(R"({"v":1})").error() == "unhealthy: missing");
  CHECK(!ParseGpuHealth(R"({"v":1,"unhealthy":"GPU-b"})").ok());
  CHECK(!ParseGpuHealth("nope").ok());
}

TEST_CASE("pod decoder: GPU containers in kubelet's order, init containers first, with their kind") {
  auto pod = DecodePod(R"({"metadata":{"name":"p","uid":"u"},"spec":{
    "containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"2"}}},
                  {"name":"cpu-only","resources":{"requests":{"cpu":"1"}}},
                  {"name":"aux","resources":{"limits":{"nvidia.com/gpu":1}}}],
    "initContainers":[{"name":"warm","resources":{"limits":{"nvidia.com/gpu":"4"}}},
                      {"name":"side","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  REQUIRE_MESSAGE(pod.ok(), pod.error());
  REQUIRE(pod->gpu_containers.size() == 4);
  CHECK(pod->gpu_containers[0] == ContainerGpus{"warm", 4, true, false});
  CHECK(pod->gpu_containers[1] == ContainerGpus{"side", 1, true, true});
  CHECK(pod->gpu_containers[2] == ContainerGpus{"main", 2, false, false});
  CHECK(pod->gpu_containers[3] == ContainerGpus{"aux", 1, false, false});
  // Long-lived: side 1 + main 2 + aux 1 = 4; warm runs before side starts: peak 4.
  CHECK(pod->gpus == 4);
}

}  // namespace
}  // namespace topofit::k8s
