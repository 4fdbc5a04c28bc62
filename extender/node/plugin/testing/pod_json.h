#pragma once
// PodJson: builds the API JSON of a pod on a node with GPU containers and a topofit.io/gpu-plan, for
// the node plugin's tests (decoded with DecodeNodePod as the service decodes watch events).

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "extender/node/plugin/plan.h"

namespace topofit::node::testing {

struct TestContainer {
  std::string name;
  int gpus = 0;
  DeviceList plan;  // Empty: not in the plan.
  bool init = false;
};

struct TestPod {
  std::string name;
  std::string uid;
  std::string node = "n1";
  std::string plan_node = "n1";  // The plan's node ("" for no plan at all).
  std::string created = "2026-11-23T00:00:00Z";
  int64_t plan_time = 0;
  std::vector<TestContainer> containers;
  bool deleting = false;
  std::string phase = "Pending";
};

inline nlohmann::json PodJson(const TestPod& p) {
  nlohmann::json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {{"name", p.name}, {"namespace", "default"}, {"uid", p.uid}, {"creationTimestamp", p.created}};
  if (p.deleting) pod["metadata"]["deletionTimestamp"] = "2026-11-23T00:10:00Z";
  pod["spec"] = {{"nodeName", p.node}, {"containers", nlohmann::json::array()}};
  GpuAssignment plan{p.plan_node, {}, p.plan_time};
  for (const auto& c : p.containers) {
    nlohmann::json cj = {{"name", c.name}, {"image", "x"}};
    if (c.gpus > 0) cj["resources"] = {{"limits", {{"nvidia.com/gpu", std::to_string(c.gpus)}}}};
    pod["spec"][c.init ? "initContainers" : "containers"].push_back(cj);
    if (!c.plan.empty()) plan.containers.emplace_back(c.name, c.plan);
  }
  if (!p.plan_node.empty()) pod["metadata"]["annotations"] = {{kGpuPlanAnnotation, k8s::EncodeGpuAssignment(plan)}};
  pod["status"] = {{"phase", p.phase}};
  return pod;
}

inline NodePod Decoded(const TestPod& p) { return DecodeNodePod(PodJson(p), "nvidia.com/gpu").value(); }

// "GPU-0000", "GPU-0001", ...: fake UUIDs for a node of n GPUs.
inline DeviceList Gpus(std::initializer_list<int> indexes) {
  DeviceList out;
  for (int i : indexes) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "GPU-%04d", i);
    out.push_back(buf);
  }
  return out;
}

}  // namespace topofit::node::testing
