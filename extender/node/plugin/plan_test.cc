// DecodeNodePod: the pod's plan and actual (the shared annotation type), a bad plan's reason, and the
// pod fields the matcher reads (containers in kubelet's order, GPU limits, deletion, phase);
// HoldsAsPlanned: what kubelet gives a container that follows its plan.
#include "extender/node/plugin/plan.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {

// The annotation's own parser and its every error are tested with it (extender/k8s/gpu_plan_test.cc);
// here, what the node side makes of a pod's annotations.
TEST_CASE("pod decoding: the plan and the actual are the shared GpuAssignment, read back as written") {
  const std::string plan = R"({"v":1,"node":"n1","containers":{"trainer":["GPU-a","GPU-b"],"side":["GPU-c"]},"t":1795000000})";
  const std::string actual = R"({"v":1,"node":"n1","containers":{"trainer":["GPU-a","GPU-d"]},"t":1795000100})";
  nlohmann::json pod = testing::PodJson({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"trainer", 2, {}}}});
  pod["metadata"]["annotations"] = {{kGpuPlanAnnotation, plan}, {kGpuActualAnnotation, actual}};
  auto p = DecodeNodePod(pod, "nvidia.com/gpu");
  REQUIRE(p.ok());
  REQUIRE(p->plan.has_value());
  CHECK(p->plan_error.empty());
  CHECK(p->plan->node == "n1");
  CHECK(p->plan->unix_seconds == 1795000000);
  CHECK(*p->plan->Find("trainer") == DeviceList{"GPU-a", "GPU-b"});
  CHECK(p->plan->Find("other") == nullptr);
  CHECK(k8s::EncodeGpuAssignment(*p->plan) == plan);
  REQUIRE(p->actual.has_value());
  CHECK(k8s::EncodeGpuAssignment(*p->actual) == actual);
}

TEST_CASE("pod decoding: a bad plan keeps the pod, unplanned, with the parser's reason, and a bad actual is dropped") {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"{\"v\":1}", "node: missing or empty"},
      {"[]", "expected an object"},
      {R"({"v":2,"node":"n1","containers":{}})", "v: version 2 is not supported (only 1)"},
      {R"({"v":1,"node":"n1"})", "containers: missing"},
      {R"({"v":1,"node":"n1","containers":{"c":["GPU-1",2]}})", "containers.c[1]: expected a string"},
      {R"({"v":1,"node":"n1","containers":{"c":["GPU-1","GPU-1"]}})", "containers.c[1]: GPU-1 repeats"},
      {R"({"v":1,"node":"n1","containers":{"c":["GPU 1"]}})", "containers.c[0]: 'GPU 1' is not a GPU UUID"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    nlohmann::json pod = testing::PodJson({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, {"G1"}}}});
    pod["metadata"]["annotations"][kGpuPlanAnnotation] = c.text;
    pod["metadata"]["annotations"][kGpuActualAnnotation] = c.text;
    auto p = DecodeNodePod(pod, "nvidia.com/gpu");
    REQUIRE(p.ok());
    CHECK_FALSE(p->plan.has_value());
    CHECK(p->plan_error == c.error);
    CHECK_FALSE(p->actual.has_value());
  }
  nlohmann::json pod = testing::PodJson({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, {"G1"}}}});
  pod["metadata"]["annotations"][kGpuPlanAnnotation] = "{";
  auto p = DecodeNodePod(pod, "nvidia.com/gpu");
  REQUIRE(p.ok());
  CHECK_FALSE(p->plan.has_value());
  CHECK(p->plan_error.find("invalid JSON") == 0);
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

TEST_CASE("holds as planned: the exact set, or a container kubelet fills wholly from its init containers' GPUs") {
  using testing::Gpus;
  // setup: 4 GPUs; main 1 and side 2 take theirs from setup's, as kubelet picks; tail 2 needs more
  // than the 1 left, so kubelet asks for it: only its exact plan is on plan.
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"setup", 4, Gpus({0, 1, 2, 3}), true},
                                   {"main", 1, Gpus({0})},
                                   {"side", 2, Gpus({1, 2})},
                                   {"tail", 2, Gpus({3, 4})}}});
  const GpuAssignment& plan = *pod.plan;
  CHECK(HoldsAsPlanned(pod, plan, "setup", Gpus({3, 2, 1, 0})));
  CHECK_FALSE(HoldsAsPlanned(pod, plan, "setup", Gpus({0, 1, 2, 4})));
  CHECK(HoldsAsPlanned(pod, plan, "main", Gpus({0})));
  CHECK(HoldsAsPlanned(pod, plan, "main", Gpus({3})));       // Kubelet's pick among setup's.
  CHECK_FALSE(HoldsAsPlanned(pod, plan, "main", Gpus({5})));  // Not setup's.
  CHECK_FALSE(HoldsAsPlanned(pod, plan, "main", Gpus({0, 1})));
  CHECK(HoldsAsPlanned(pod, plan, "side", Gpus({0, 3})));
  CHECK_FALSE(HoldsAsPlanned(pod, plan, "side", Gpus({0, 0})));
  CHECK(HoldsAsPlanned(pod, plan, "tail", Gpus({4, 3})));
  CHECK_FALSE(HoldsAsPlanned(pod, plan, "tail", Gpus({0, 4})));  // Asked for: the plan or off it.
  CHECK_FALSE(HoldsAsPlanned(pod, plan, "other", Gpus({0})));
  // Without an init container nothing is kubelet's pick.
  NodePod flat = testing::Decoded({"q", "u2", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"main", 1, Gpus({0})}}});
  CHECK_FALSE(HoldsAsPlanned(flat, *flat.plan, "main", Gpus({1})));
}

}  // namespace topofit::node
