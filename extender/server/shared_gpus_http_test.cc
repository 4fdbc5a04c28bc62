// Shared GPUs over HTTP: bind on a time-sliced node plans replica ids on distinct GPUs, a MIG node
// gets gpu-ids only, and GET /api/v1/nodes shows the physical GPUs and the free devices.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

#include "extender/cluster/testing/shared_nodes.h"
#include "extender/k8s/gpu_plan.h"
#include "extender/k8s/topofit_annotations.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {
using nlohmann::json;
using testing::GpuPod;
using testing::LiveServer;

// Filters and binds pod `name` (2 GPUs, namespace t) to `node`; the annotations the bind wrote.
std::map<std::string, std::string> BindTwo(LiveServer& srv, const std::string& name, const std::string& node) {
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod(name, 2) + R"(,"NodeNames":[")" + node + R"("]})"));
  auto res = srv.Post("/scheduler/bind", R"({"PodName":")" + name + R"(","PodNamespace":"t","PodUID":"uid-)" + name +
                                             R"(","Node":")" + node + R"("})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  return writer.Pods()["t/" + name].annotations;
}

// The plan among `annotations`, parsed (the test fails without one).
k8s::GpuAssignment PlanOf(const std::map<std::string, std::string>& annotations) {
  REQUIRE(annotations.count(k8s::kGpuPlanAnnotation));
  auto plan = k8s::ParseGpuAssignment(annotations.at(k8s::kGpuPlanAnnotation));
  REQUIRE_MESSAGE(plan.ok(), plan.error());
  return *plan;
}

TEST_CASE("shared gpus: bind plans replica ids of distinct GPUs, nodes API shows GPUs and free devices") {
  LiveServer srv;
  k8s::NodeObject ts = cluster::testing::TimeSlicedA100Node("ts");
  std::string uuids;
  for (int i = 0; i < 8; ++i) uuids += fmt::format("{}GPU-ts-{}", i ? "," : "", i);
  ts.meta.annotations[k8s::kGpuUuidsAnnotation] = uuids;
  srv.app->model().ApplyNode(ts);
  const k8s::GpuAssignment plan = PlanOf(BindTwo(srv, "r2", "ts"));
  std::set<std::string> gpus;
  for (const std::string& id : plan.AllUuids()) {
    auto sep = id.find("::");
    REQUIRE(sep != std::string::npos);
    CHECK(id.starts_with("GPU-ts-"));
    gpus.insert(id.substr(0, sep));
  }
  CHECK(gpus.size() == 2);

  auto node = srv.client->Get("/api/v1/nodes/ts");
  REQUIRE(node);
  json j = json::parse(node->body);
  CHECK(j["profile"] == "hgx-a100-8");
  CHECK(j["sharing"]["mode"] == "time-slicing");
  CHECK(j["sharing"]["physicalGpus"] == 8);
  CHECK(j["sharing"]["devicesPerGpu"] == 4);
  CHECK(j["sharing"]["freeDevices"] == 30);
  CHECK(j["sharing"]["wholeFreeGpus"].size() == 6);
  CHECK(j["sharing"]["gpusWithFreeDevices"].size() == 8);
  REQUIRE(j["gpuStates"].size() == 32);
  CHECK(j["gpuStates"][5]["gpu"] == 1);
  CHECK(j["gpuStates"][5]["device"] == "replica 1");
  CHECK(j["gpuStates"][5]["uuid"] == "GPU-ts-1");

  auto metrics = srv.client->Get("/metrics");
  REQUIRE(metrics);
  const std::string& m = metrics->body;
  CHECK(m.find("topofit_devices{kind=\"replica\",state=\"free\"} 30\n") != std::string::npos);
  CHECK(m.find("topofit_devices{kind=\"replica\",state=\"held\"} 2\n") != std::string::npos);
  CHECK(m.find("topofit_shared_physical_gpus{kind=\"replica\",state=\"whole-free\"} 6\n") != std::string::npos);
  CHECK(m.find("topofit_shared_physical_gpus{kind=\"replica\",state=\"partly-held\"} 2\n") != std::string::npos);
  CHECK(m.find("topofit_shared_physical_gpus{kind=\"replica\",state=\"full\"} 0\n") != std::string::npos);
  CHECK(m.find("topofit_devices{kind=\"mig\",state=\"free\"} 0\n") != std::string::npos);
  CHECK(m.find("topofit_devices{kind=\"whole\",state=\"free\"} ") != std::string::npos);
}

TEST_CASE("shared gpus: a MIG node gets gpu-ids and no plan, nodes without sharing have no sharing field") {
  LiveServer srv;
  srv.app->model().ApplyNode(cluster::testing::MigA100Node("mig"));
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("m1", 1) + R"(,"NodeNames":["mig"]})"));
  auto res = srv.Post("/scheduler/bind", R"({"PodName":"m1","PodNamespace":"t","PodUID":"uid-m1","Node":"mig"})");
  REQUIRE(res);
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  const auto ann = writer.Pods()["t/m1"].annotations;
  CHECK(ann.count(k8s::kGpuIdsAnnotation) == 1);
  CHECK(ann.count(k8s::kGpuPlanAnnotation) == 0);
  auto nodes = srv.client->Get("/api/v1/nodes");
  REQUIRE(nodes);
  json j = json::parse(nodes->body);
  int shared = 0;
  for (const auto& n : j["nodes"]) {
    if (n["name"] != "mig") {
      CHECK_FALSE(n.contains("sharing"));
      continue;
    }
    ++shared;
    CHECK(n["sharing"]["mode"] == "mig-single");
    CHECK(n["sharing"]["migProfile"] == "1g.10gb");
    CHECK(n["sharing"]["freeDevices"] == 55);
    CHECK(n["sharing"]["wholeFreeGpus"].size() == 7);
  }
  CHECK(shared == 1);
  auto metrics = srv.client->Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("topofit_devices{kind=\"mig\",state=\"held\"} 1\n") != std::string::npos);
  CHECK(metrics->body.find("topofit_shared_physical_gpus{kind=\"mig\",state=\"partly-held\"} 1\n") !=
        std::string::npos);
  CHECK(metrics->body.find("topofit_shared_physical_gpus{kind=\"mig\",state=\"whole-free\"} 7\n") !=
        std::string::npos);
}

TEST_CASE("shared gpus: a MIG node that publishes its MIG map gets a plan naming MIG devices of one GPU") {
  LiveServer srv;
  k8s::NodeObject mig = cluster::testing::MigA100Node("mig");
  std::string uuids, map;
  for (int g = 0; g < 8; ++g) {
    uuids += fmt::format("{}GPU-m-{}", g ? "," : "", g);
    for (int d = 0; d < 7; ++d) map += fmt::format("{}MIG-{}-{}", d ? "," : g ? ";" : "", g, d);
  }
  mig.meta.annotations[k8s::kGpuUuidsAnnotation] = uuids;
  mig.meta.annotations[k8s::kGpuMigUuidsAnnotation] = map;
  srv.app->model().ApplyNode(mig);
  const k8s::GpuAssignment plan = PlanOf(BindTwo(srv, "m2", "mig"));
  std::set<std::string> gpus;
  for (const std::string& id : plan.AllUuids()) {
    REQUIRE(id.starts_with("MIG-"));
    gpus.insert(id.substr(0, id.rfind('-')));
  }
  CHECK(gpus.size() == 1);  // Best fit: both on one GPU.
}

}  // namespace
}  // namespace topofit::server
