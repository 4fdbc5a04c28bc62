// Bind writes the per-container plan by UUID (topofit.io/gpu-plan) beside gpu-ids, in the same
// Binding; nodes without a UUID map get gpu-ids alone. The query API shows each GPU's state.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "base/strings.h"

#include "extender/k8s/gpu_plan.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {
using nlohmann::json;
using testing::GpuPod;
using testing::LiveServer;

k8s::NodeObject UuidNode(const std::string& name) {
  k8s::NodeObject n;
  n.meta.name = name;
  n.meta.uid = "node-" + name;
  n.allocatable_gpus = n.capacity_gpus = 8;
  n.meta.annotations[k8s::kTopologyAnnotation] = "dgx1-v100";
  std::string uuids, pci;
  for (int i = 0; i < 8; ++i) {
    uuids += fmt::format("{}GPU-{}-{}", i ? "," : "", name, i);
    pci += fmt::format("{}00000000:{:02X}:00.0", i ? "," : "", 0x10 + i);
  }
  n.meta.annotations[k8s::kGpuUuidsAnnotation] = uuids;
  n.meta.annotations[k8s::kGpuPciAnnotation] = pci;
  return n;
}

// An init container (4) whose GPUs the two app containers (2 + 2) reuse.
const char* kMultiPod = R"({"metadata":{"name":"mc","namespace":"t","uid":"uid-mc"},"spec":{
  "initContainers":[{"name":"warm","resources":{"limits":{"nvidia.com/gpu":"4"}}}],
  "containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"2"}}},
                {"name":"log","resources":{"requests":{"cpu":"100m"}}},
                {"name":"b","resources":{"limits":{"nvidia.com/gpu":"2"}}}]},"status":{}})";

TEST_CASE("bind: writes topofit.io/gpu-plan per container by UUID, with gpu-ids, in one Binding") {
  LiveServer srv;
  srv.app->model().ApplyNode(UuidNode("u1"));
  REQUIRE(srv.Post("/scheduler/filter", std::string(R"({"Pod":)") + kMultiPod + R"(,"NodeNames":["u1"]})"));
  auto res = srv.Post("/scheduler/bind", R"({"PodName":"mc","PodNamespace":"t","PodUID":"uid-mc","Node":"u1"})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  auto pods = writer.Pods();
  REQUIRE(pods.count("t/mc"));
  const auto& ann = pods["t/mc"].annotations;
  REQUIRE(ann.count(k8s::kGpuIdsAnnotation));
  REQUIRE(ann.count(k8s::kGpuPlanAnnotation));
  auto plan = k8s::ParseGpuAssignment(ann.at(k8s::kGpuPlanAnnotation));
  REQUIRE_MESSAGE(plan.ok(), plan.error());
  CHECK(plan->node == "u1");
  CHECK(plan->unix_seconds > 1700000000);
  REQUIRE(plan->containers.size() == 3);
  CHECK(plan->containers[0].first == "warm");
  CHECK(plan->containers[1].first == "a");
  CHECK(plan->containers[2].first == "b");
  CHECK(plan->containers[0].second.size() == 4);
  // The app containers split the set; the init container's GPUs are exactly theirs (reused).
  std::vector<std::string> apps = plan->containers[1].second;
  apps.insert(apps.end(), plan->containers[2].second.begin(), plan->containers[2].second.end());
  std::vector<std::string> init = plan->containers[0].second;
  std::sort(apps.begin(), apps.end());
  std::sort(init.begin(), init.end());
  CHECK(apps == init);
  // gpu-ids names the same GPUs by index.
  std::string ids = ann.at(k8s::kGpuIdsAnnotation);
  std::vector<std::string> from_ids;
  for (std::string_view i : Split(ids, ',')) from_ids.push_back("GPU-u1-" + std::string(i));
  CHECK(from_ids == init);

  // The query API: per-GPU states, with UUID, PCI bus id and container.
  auto node = srv.client->Get("/api/v1/nodes/u1");
  REQUIRE(node);
  json j = json::parse(node->body);
  REQUIRE(j["gpuStates"].size() == 8);
  int planned = 0;
  for (const auto& g : j["gpuStates"]) {
    CHECK(g["uuid"].get<std::string>().starts_with("GPU-u1-"));
    CHECK(g["pciBusId"].get<std::string>().starts_with("00000000:1"));
    if (g["state"] == "planned") {
      ++planned;
      CHECK(g["pod"] == "t/mc");
    } else {
      CHECK(g["state"] == "free");
    }
  }
  CHECK(planned == 4);
}

TEST_CASE("bind: a node without a UUID map gets an index-only placement (gpu-ids, no plan)") {
  LiveServer srv;
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("ix", 2) + R"(,"NodeNames":["a100-1"]})"));
  auto res = srv.Post("/scheduler/bind", R"({"PodName":"ix","PodNamespace":"t","PodUID":"uid-ix","Node":"a100-1"})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  auto pods = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer()).Pods();
  CHECK(pods["t/ix"].annotations.count(k8s::kGpuIdsAnnotation) == 1);
  CHECK(pods["t/ix"].annotations.count(k8s::kGpuPlanAnnotation) == 0);
}

}  // namespace
}  // namespace topofit::server
