// ParseGpuPlan / EncodeGpuPlan and DecodeNodePod: the plan's exact shape, its errors, and the pod
// fields the matcher reads (containers in kubelet's order, GPU limits, deletion, phase).
#include "extender/node/plugin/plan.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {

TEST_CASE("gpu-plan: parses the agreed shape and encodes it back byte for byte") {
  const std::string text = R"({"v":1,"node":"n1","containers":{"trainer":["GPU-a","GPU-b"],"side":["GPU-c"]},"t":1795000000})";
  auto plan = ParseGpuPlan(text);
  REQUIRE(plan.ok());
  CHECK(plan->node == "n1");
  CHECK(plan->unix_seconds == 1795000000);
  REQUIRE(plan->containers.size() == 2);
  CHECK(*plan->Find("trainer") == DeviceList{"GPU-a", "GPU-b"});
  CHECK(*plan->Find("side") == DeviceList{"GPU-c"});
  CHECK(plan->Find("other") == nullptr);
  CHECK(EncodeGpuPlan(*plan) == text);
}

TEST_CASE("gpu-plan: unknown keys are ignored and t is optional") {
  auto plan = ParseGpuPlan(R"({"v":1,"node":"n1","containers":{},"extra":[1]})");
  REQUIRE(plan.ok());
  CHECK(plan->unix_seconds == 0);
  CHECK(plan->containers.empty());
}

TEST_CASE("gpu-plan: each bad input gets its own message") {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"", "not JSON"},
      {"[]", "expected an object"},
      {R"({"v":2,"node":"n1","containers":{}})", "v: expected 1"},
      {R"({"node":"n1","containers":{}})", "v: expected 1"},
      {R"({"v":1,"node":"","containers":{}})", "node: expected a non-empty string"},
      {R"({"v":1,"node":"n1"})", "containers: expected an object"},
      {R"({"v":1,"node":"n1","containers":{"a":"GPU-1"}})", "containers.a: expected an array"},
      {R"({"v":1,"node":"n1","containers":{"a":["GPU-1",2]}})", "containers.a[1]: expected a string"},
      {R"({"v":1,"node":"n1","containers":{"a":["GPU-1","GPU-1"]}})", "containers.a[1]: GPU-1 repeated"},
      {R"({"v":1,"node":"n1","containers":{"a":[""]}})", "containers.a[0]: empty device ID"},
      {R"({"v":1,"node":"n1","containers":{},"t":"x"})", "t: expected an integer"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto plan = ParseGpuPlan(c.text);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error() == c.error);
  }
}

TEST_CASE("pod decoding: GPU containers in kubelet's order, init first, sidecars marked") {
  nlohmann::json pod = nlohmann::json::parse(R"({
    "metadata": {"name": "p", "namespace": "ml", "uid": "u1", "creationTimestamp": "2026-11-23T00:00:01Z",
                 "annotations": {"topofit.io/gpu-plan": "{\"v\":1,\"node\":\"n1\",\"containers\":{\"a\":[\"G1\"]}}"}},
    "spec": {"nodeName": "n1",
             "initContainers": [{"name": "i1", "resources": {"limits": {"nvidia.com/gpu": 2}}},
                                {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"nvidia.com/gpu": "1"}}},
                                {"name": "nogpu"}],
             "containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "2"}}},
                            {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "0"}}}]},
    "status": {"phase": "Pending"}})");
  auto p = DecodeNodePod(pod, "nvidia.com/gpu");
  REQUIRE(p.ok());
  CHECK(p->key() == "ml/p");
  CHECK(p->node_name == "n1");
  CHECK_FALSE(p->deleting);
  CHECK_FALSE(p->terminal());
  REQUIRE(p->containers.size() == 3);
  CHECK(p->containers[0].name == "i1");
  CHECK(p->containers[0].init);
  CHECK_FALSE(p->containers[0].restartable);
  CHECK(p->containers[0].gpus == 2);
  CHECK(p->containers[1].restartable);
  CHECK(p->containers[2].name == "a");
  CHECK_FALSE(p->containers[2].init);
  REQUIRE(p->plan.has_value());
  CHECK(*p->plan->Find("a") == DeviceList{"G1"});
}

TEST_CASE("pod decoding: a broken plan keeps the pod, without a plan, with the reason") {
  nlohmann::json pod = testing::PodJson({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, {"G1"}}}});
  pod["metadata"]["annotations"][kGpuPlanAnnotation] = "{\"v\":1}";
  auto p = DecodeNodePod(pod, "nvidia.com/gpu");
  REQUIRE(p.ok());
  CHECK_FALSE(p->plan.has_value());
  CHECK(p->plan_error == "node: expected a non-empty string");
}

TEST_CASE("pod decoding: not a pod is an error, and a PodList, an array and one pod all read") {
  CHECK(DecodeNodePod(nlohmann::json::parse(R"({"metadata":{"name":"x"}})"), "nvidia.com/gpu").error() ==
        "pod x: no metadata.uid");
  CHECK_FALSE(DecodeNodePod(nlohmann::json::array(), "nvidia.com/gpu").ok());
  nlohmann::json one = testing::PodJson({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, {"G1"}}}});
  nlohmann::json list = {{"kind", "PodList"}, {"items", {one, one}}};
  CHECK(DecodeNodePods(list.dump(), "nvidia.com/gpu")->size() == 2);
  CHECK(DecodeNodePods(nlohmann::json::array({one}).dump(), "nvidia.com/gpu")->size() == 1);
  CHECK(DecodeNodePods(one.dump(), "nvidia.com/gpu")->size() == 1);
  CHECK(DecodeNodePods("{", "nvidia.com/gpu").error() == "not JSON");
  CHECK(DecodeNodePods("[1]", "nvidia.com/gpu").error() == "items[0]: pod: expected an object");
}

}  // namespace topofit::node
