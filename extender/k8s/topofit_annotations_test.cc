// Decoding topofit's own annotations on pods and nodes: absent, decoded, or unusable with why.
#include "extender/k8s/topofit_annotations.h"

#include <doctest/doctest.h>

namespace topofit::k8s {
namespace {

TEST_CASE("topofit annotations: gpu-ids decoded, with spaces, and refused with why") {
  CHECK(*ParseGpuIds("0,1,2,3") == std::vector<int>{0, 1, 2, 3});
  CHECK(*ParseGpuIds(" 5 ,\t3") == std::vector<int>{5, 3});
  CHECK(*ParseGpuIds("63") == std::vector<int>{63});
  CHECK(ParseGpuIds("  ").error() == "is empty");
  for (const char* bad : {"0,0", "64", "-1", "0,", "a", "1 2", "0,,1"})
    CHECK_MESSAGE(ParseGpuIds(bad).error() == std::string("'") + bad + "' is not a GPU list like 0,1,2,3", bad);
}

TEST_CASE("topofit annotations: a pod's ids, plan and observation") {
  PodObject pod;
  CHECK_FALSE(DecodePodGpuAnnotations(pod).gpu_ids.value);  // Absent: no value, no error.
  CHECK(DecodePodGpuAnnotations(pod).gpu_ids.error.empty());
  pod.meta.annotations[kGpuIdsAnnotation] = "2,3";
  pod.meta.annotations[kGpuPlanAnnotation] = R"({"v":1,"node":"n","containers":{"c":["GPU-a"]},"t":7})";
  pod.meta.annotations[kGpuActualAnnotation] = "{";
  PodGpuAnnotations a = DecodePodGpuAnnotations(pod);
  CHECK(*a.gpu_ids.value == std::vector<int>{2, 3});
  REQUIRE(a.plan.value);
  CHECK(a.plan.value->node == "n");
  CHECK_FALSE(a.actual.value);
  CHECK_FALSE(a.actual.error.empty());
}

TEST_CASE("topofit annotations: a node's topology, UUIDs, PCI ids and health") {
  NodeObject node;
  NodeGpuAnnotations none = DecodeNodeGpuAnnotations(node);
  CHECK_FALSE(none.topology);
  CHECK_FALSE(none.uuids);
  CHECK_FALSE(none.health.value);
  CHECK(none.health.error.empty());
  node.meta.annotations[kTopologyAnnotation] = " dgx1-v100 ";
  node.meta.annotations[kGpuUuidsAnnotation] = "GPU-a, GPU-b,,GPU-a";
  node.meta.annotations[kGpuHealthAnnotation] = "not json";
  NodeGpuAnnotations a = DecodeNodeGpuAnnotations(node);
  CHECK(*a.topology == " dgx1-v100 ");  // As written: the resolver decides what blank or padded means.
  CHECK(*a.uuids == std::vector<std::string>{"GPU-a", "GPU-b", "", "GPU-a"});  // The model judges the list.
  CHECK_FALSE(a.pci_bus_ids);
  CHECK_FALSE(a.health.value);
  CHECK_FALSE(a.health.error.empty());
}

}  // namespace
}  // namespace topofit::k8s
