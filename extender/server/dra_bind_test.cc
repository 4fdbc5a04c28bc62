// Bind on DRA nodes (docs/dra.md): the GPUs are the claim's that kube-scheduler allocated in PreBind;
// topofit records them (gpu-ids), writes no plan it could not enforce, and says in the GPUsAssigned
// event whether the claim got the GPUs it predicted.
#include <doctest/doctest.h>

#include <chrono>

#include "extender/cluster/testing/dra_builders.h"
#include "extender/k8s/gpu_plan.h"
#include "extender/server/server_test_util.h"
#include "test/util/temp_dir.h"

namespace topofit::server {
namespace {

using namespace cluster::testing;
using testing::LiveServer;

k8s::Snapshot TwoDraNodes() {
  k8s::Snapshot s;
  s.nodes = {DecodedNode("cross", 0), DecodedNode("paired", 0)};
  s.device_classes = {GpuClass()};
  s.resource_slices = {GpuSlice("cross", {0, 2, 1, 3}), GpuSlice("paired", {0, 1, 2, 3})};
  return s;
}

std::string PodJson(const std::string& uid, const std::string& name = "p") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2"}}}]},"status":{}})";
}

std::string LastEvent(LiveServer& srv) {
  auto events = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer()).Events();
  return events.empty() ? std::string() : events.back().message;
}

}  // namespace

TEST_CASE("bind on a DRA node: the claim's GPUs, no plan, and the event compares them with the prediction") {
  ServeConfig cfg;
  cfg.pipeline.filter_keeps_best = true;  // As deployed.
  LiveServer srv(cfg, TwoDraNodes());
  srv.app->verbs().SetDra(&srv.app->dra(), std::chrono::milliseconds(100));
  auto filter = srv.Post("/scheduler/filter", R"({"Pod":)" + PodJson("pu") + R"(,"NodeNames":["cross","paired"]})");
  REQUIRE(filter);
  CHECK(filter->body.find(R"("NodeNames":["paired"])") != std::string::npos);  // Its first fit shares a root.

  srv.app->dra().ApplyResourceClaim(GpuClaim("claim-1", "pu", "paired", {0, 1}));  // PreBind, before bind.
  auto res = srv.Post("/scheduler/bind", R"({"PodName":"p","PodNamespace":"ml","PodUID":"pu","Node":"paired"})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  auto pods = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer()).Pods();
  const auto& ann = pods["ml/p"].annotations;
  CHECK(ann.at(k8s::kGpuIdsAnnotation) == "0,1");
  CHECK_FALSE(ann.count(k8s::kGpuPlanAnnotation));  // kubelet asks the DRA driver, not topofit node.
  CHECK(LastEvent(srv).find("; DRA claim allocated GPUs 0,1 as predicted") != std::string::npos);

  // A bind whose claim never shows up within the wait: topofit reserves its prediction and says so.
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + PodJson("pv", "q") + R"(,"NodeNames":["cross"]})"));
  auto start = std::chrono::steady_clock::now();
  res = srv.Post("/scheduler/bind", R"({"PodName":"q","PodNamespace":"ml","PodUID":"pv","Node":"cross"})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100));
  CHECK(LastEvent(srv).find("; DRA claim not seen yet; predicted GPUs 0,2") != std::string::npos);
  // Its claim arrives with other GPUs: the model follows the claim.
  srv.app->dra().ApplyResourceClaim(GpuClaim("claim-2", "pv", "cross", {1, 3}));
  auto held = srv.app->model().PodByUid("pv");
  REQUIRE(held);
  CHECK(held->gpus == GpuSet::Of({1, 3}));
}

TEST_CASE("serve --snapshot: a file with DeviceClasses, ResourceSlices and ResourceClaims models DRA nodes") {
  const std::string text = R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"d1"},"status":{"allocatable":{"cpu":"8"}}},
    {"kind":"Pod","metadata":{"name":"p","namespace":"ml","uid":"pu"},"spec":{"nodeName":"d1",
     "containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Running"}},
    {"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"extendedResourceName":"nvidia.com/gpu"}},
    {"kind":"ResourceSlice","metadata":{"name":"d1"},"spec":{"driver":"gpu.nvidia.com","nodeName":"d1",
     "pool":{"name":"d1","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}},
    {"kind":"ResourceClaim","metadata":{"name":"p-extended-resources-1","namespace":"ml","uid":"c1",
     "annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},
     "ownerReferences":[{"kind":"Pod","name":"p","uid":"pu","controller":true}]},
     "status":{"allocation":{"devices":{"results":[{"request":"r","driver":"gpu.nvidia.com","pool":"d1","device":"gpu-1"}]}}}}]})";
  topofit::testing::TempDir dir;
  auto app = ServeApp::Create(ServeConfig{}, "", nullptr, /*log_decisions=*/false);
  REQUIRE(app.ok());
  auto loaded = (*app)->LoadFile(dir.Write("dra.json", text));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error());
  CHECK(loaded->nodes == 1);
  CHECK(loaded->pods == 1);
  CHECK(loaded->dra_objects == 3);
  auto node = (*app)->model().Node("d1");
  REQUIRE(node);
  CHECK(node->usable.size() == 2);  // No selector: every device of the slice is a GPU.
  CHECK(node->source == cluster::TopologySource::kDraAttributes);
  auto held = (*app)->model().PodByUid("pu");
  REQUIRE(held);
  CHECK(held->gpus == GpuSet::Of({1}));  // The claim's device (by identity: no uuid, driver/pool/device).
  CHECK_FALSE(held->unknown_identity);
}

}  // namespace topofit::server
