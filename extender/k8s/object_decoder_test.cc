#include "extender/k8s/object_decoder.h"

#include <doctest/doctest.h>

namespace topofit::k8s {

TEST_CASE("decode pod: effective GPU request with init and sidecar containers") {
  auto pod = DecodePod(R"({"metadata":{"name":"p","namespace":"ns","uid":"u1",
    "annotations":{"topofit.io/min-link":"NV"}},
    "spec":{"nodeName":"n1","priority":7,
      "initContainers":[{"name":"side","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"1"}}},
                        {"name":"init","resources":{"requests":{"nvidia.com/gpu":"3"},"limits":{"nvidia.com/gpu":"3"}}}],
      "containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":2,"cpu":"500m","memory":"1Gi"}}}]},
    "status":{"phase":"Running","nominatedNodeName":"n2"}})");
  REQUIRE_MESSAGE(pod.ok(), (pod.ok() ? "" : pod.error()));
  CHECK(pod->meta.name == "p");
  CHECK(pod->meta.namespace_ == "ns");
  CHECK(pod->meta.uid == "u1");
  CHECK(pod->meta.annotations.at("topofit.io/min-link") == "NV");
  CHECK(pod->gpus == 4);  // max(2 + 1, 1 + 3)
  CHECK(pod->cpu_milli == 500);
  CHECK(pod->memory_bytes == 1LL << 30);
  CHECK(pod->node_name == "n1");
  CHECK(pod->priority == 7);
  CHECK(pod->phase == "Running");
  CHECK(pod->nominated_node == "n2");
}

TEST_CASE("decode pod: preemptionPolicy Never, and any other value or none, preempts") {
  auto never = DecodePod(R"({"spec":{"priority":100,"preemptionPolicy":"Never","containers":[]}})");
  REQUIRE(never.ok());
  CHECK(never->preempt_never);
  auto lower = DecodePod(R"({"spec":{"priority":100,"preemptionPolicy":"PreemptLowerPriority","containers":[]}})");
  REQUIRE(lower.ok());
  CHECK_FALSE(lower->preempt_never);
  auto absent = DecodePod(R"({"spec":{"containers":[]}})");
  REQUIRE(absent.ok());
  CHECK_FALSE(absent->preempt_never);
}

TEST_CASE("decode pod: errors name the pod and the field") {
  auto half = DecodePod(R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[
    {"resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}})");
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().find("pod ns/p") != std::string::npos);
  CHECK(half.error().find("spec.containers[0].resources.limits[nvidia.com/gpu]") != std::string::npos);
  auto neg = DecodePod(R"({"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"-1"}}}]}})");
  CHECK_FALSE(neg.ok());
  auto milli = DecodePod(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"500m"}}}]}})");
  CHECK_FALSE(milli.ok());
  auto mismatch = DecodePod(R"({"spec":{"containers":[{"resources":{
    "requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"2"}}}]}})");
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().find("must equal limits") != std::string::npos);
  CHECK(DecodePod(R"({"metadata":{"name":5}})").ok());  // hand-written YAML: numbers are text
  CHECK_FALSE(DecodePod(R"({"metadata":{"labels":[1]}})").ok());
  CHECK_FALSE(DecodePod(R"({"spec":{"containers":{}}})").ok());
  CHECK_FALSE(DecodePod(R"({"spec":)").ok());
  CHECK_FALSE(DecodePod("[]").ok());
}

TEST_CASE("decode node: allocatable falls back to capacity") {
  auto node = DecodeNode(R"({"metadata":{"name":"n","labels":{"nvidia.com/gpu.count":"8"}},
    "spec":{"unschedulable":true},
    "status":{"capacity":{"nvidia.com/gpu":"8","cpu":"64","memory":"512Gi"}}})");
  REQUIRE(node.ok());
  CHECK(node->meta.name == "n");
  CHECK(node->allocatable_gpus == 8);
  CHECK(node->capacity_gpus == 8);
  CHECK(node->allocatable_cpu_milli == 64000);
  CHECK(node->unschedulable);
  CHECK(node->meta.labels.at("nvidia.com/gpu.count") == "8");
  auto bad = DecodeNode(R"({"metadata":{"name":"n"},"status":{"allocatable":{"nvidia.com/gpu":"1.5"}}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("node n") == 0);
}

TEST_CASE("decode: keys of Kubernetes structs are case-insensitive") {
  auto pod = DecodePod(R"({"metadata":{"name":"p"},"spec":{"nodename":"x","initcontainers":[
    {"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})");
  REQUIRE(pod.ok());
  CHECK(pod->node_name == "x");
  CHECK(pod->gpus == 2);
}

TEST_CASE("decode pod: GPU models from nodeSelector and required node affinity") {
  auto only = [](const char* spec) {
    auto pod = DecodePod(std::string(R"({"metadata":{"name":"p"},"spec":)") + spec + "}");
    REQUIRE(pod.ok());
    return pod->gpu_products;
  };
  CHECK(only(R"({"containers":[]})").empty());
  CHECK(only(R"({"nodeSelector":{"nvidia.com/gpu.product":"A100-SXM4-80GB","zone":"a"}})") ==
        std::vector<std::string>{"A100-SXM4-80GB"});
  const char* affinity = R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["T4","V100"]}]},
        {"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["A10"]},
                             {"key":"zone","operator":"In","values":["a"]}]}]}}}})";
  CHECK(only(affinity) == std::vector<std::string>{"A10", "T4", "V100"});  // Terms are ORed.
  // A term that leaves the model free makes the pod model-agnostic; NotIn is not a list of models.
  CHECK(only(R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["T4"]}]},
        {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}}})").empty());
  CHECK(only(R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[
        {"key":"nvidia.com/gpu.product","operator":"NotIn","values":["T4"]}]}]}}}})").empty());
  // nodeSelector and affinity both hold: the models both allow.
  CHECK(only(R"({"nodeSelector":{"nvidia.com/gpu.product":"T4"},"affinity":{"nodeAffinity":
      {"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[
        {"key":"nvidia.com/gpu.product","operator":"In","values":["T4","V100"]}]}]}}}})") ==
        std::vector<std::string>{"T4"});
}

}  // namespace topofit::k8s
