// The live source feeding the real ClusterModel: rebuilt from the API alone after a restart.
#include "extender/apiclient/model_sink.h"

#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "extender/apiclient/testing/fake_apiserver.h"
#include "extender/apiclient/testing/recording_sink.h"
#include "extender/cluster/testing/dra_builders.h"

namespace topofit::apiclient {
namespace {

using testing::FakeApiServer;
using testing::NodeJson;
using testing::PodJson;
using testing::WaitFor;

LiveOptions OptionsFor(const FakeApiServer& server, std::atomic<int>* ready_calls) {
  LiveOptions o;
  o.kubeconfig = testing::WriteTempFile(
      "model.kubeconfig", testing::KubeconfigYaml(server.url(), testing::GetTestPki().ca_pem, "    token: t\n"));
  o.watch.backoff_initial = std::chrono::milliseconds(20);
  o.watch.watch_timeout_min = std::chrono::seconds(1);
  o.on_ready = [ready_calls] { ready_calls->fetch_add(1); };
  o.log = [](const std::string&) {};
  return o;
}

TEST_CASE("start live cluster: a fresh model is rebuilt from annotations, no GPU is given twice") {
  FakeApiServer server;
  server.Put("nodes", NodeJson("n1", 8));
  server.Put("pods", PodJson("ml", "a", "uid-a", 4, "n1", "0,1,2,3", "Running"));
  server.Put("pods", PodJson("ml", "b", "uid-b", 2, "n1", "4,5", "Running"));
  // A second claim on GPU 5 (e.g. a stale annotation): the model must not count GPU 5 twice.
  server.Put("pods", PodJson("ml", "c", "uid-c", 1, "n1", "5", "Running"));

  std::atomic<int> ready_calls{0};
  LiveOptions options = OptionsFor(server, &ready_calls);
  for (int restart = 0; restart < 2; ++restart) {  // The second round is "after a restart".
    cluster::ClusterModel model;
    auto api = ConnectApi(options);
    REQUIRE_MESSAGE(api.ok(), api.error());
    auto live = StartLiveCluster(options, *api, model);
    REQUIRE(WaitFor([&] { return live->ready(); }));
    auto a = model.PodByUid("uid-a");
    REQUIRE(a.has_value());
    CHECK(a->gpus == GpuSet::Of({0, 1, 2, 3}));
    auto b = model.PodByUid("uid-b");
    REQUIRE(b.has_value());
    CHECK(b->gpus == GpuSet::Of({4, 5}));
    auto c = model.PodByUid("uid-c");
    REQUIRE(c.has_value());
    CHECK_FALSE(c->gpus.Intersects(a->gpus | b->gpus));
    auto node = model.Node("n1");
    REQUIRE(node.has_value());
    CHECK(node->free.size() == 1);

    // A finished pod frees its GPUs; a deleted node leaves the model.
    server.Put("pods", PodJson("ml", "a", "uid-a", 4, "n1", "0,1,2,3", "Succeeded"));
    CHECK(WaitFor([&] { return !model.PodByUid("uid-a").has_value(); }));
    CHECK(model.Node("n1")->free.size() == 5);
    server.Put("pods", PodJson("ml", "a", "uid-a", 4, "n1", "0,1,2,3", "Running"));  // Back for round 2.
    CHECK(WaitFor([&] { return model.PodByUid("uid-a").has_value(); }));
    live.reset();  // Stops the watches before the model goes.
  }
  CHECK(ready_calls.load() == 2);

  cluster::ClusterModel model;
  auto api = ConnectApi(options);
  REQUIRE(api.ok());
  auto live = StartLiveCluster(options, *api, model);
  REQUIRE(WaitFor([&] { return live->ready(); }));
  server.Delete("nodes", "n1");
  CHECK(WaitFor([&] { return !model.Node("n1").has_value(); }));
}

TEST_CASE("start live cluster: GPUs freed on a node requeue the pods that waited there for them") {
  FakeApiServer server;
  server.Put("nodes", NodeJson("n1", 8));
  server.Put("nodes", NodeJson("n2", 8));
  server.Put("pods", PodJson("ml", "a", "uid-a", 4, "n1", "0,1,2,3", "Running"));
  server.Put("pods", PodJson("ml", "b", "uid-b", 4, "n1", "4,5,6,7", "Running"));
  server.Put("pods", PodJson("ml", "c", "uid-c", 8, "n2", "0,1,2,3,4,5,6,7", "Running"));

  std::atomic<int> ready_calls{0};
  LiveOptions options = OptionsFor(server, &ready_calls);
  cluster::ClusterModel model;
  std::mutex mu;
  std::vector<std::string> requeued;  // "name@node"
  auto requeue = [&](const cluster::WaitingPod& pod, const std::string& node) {
    std::lock_guard<std::mutex> lock(mu);
    requeued.push_back(pod.name + "@" + node);
  };
  auto got = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return requeued;
  };
  auto api = ConnectApi(options);
  REQUIRE_MESSAGE(api.ok(), api.error());
  auto live = StartLiveCluster(options, *api, model, requeue);
  REQUIRE(WaitFor([&] { return live->ready(); }));
  // As filter notes them: turned away on n1 (and w8 on n2) for want of free GPUs.
  model.waits().Note({"uid-w2", "ml", "w2", 2}, {"n1"});
  model.waits().Note({"uid-w8", "ml", "w8", 8}, {"n1", "n2"});

  // A pod update that frees nothing (still running) requeues nobody.
  server.Put("pods", PodJson("ml", "b", "uid-b", 4, "n1", "4,5,6,7", "Running"));
  // a finishes: 4 free on n1, enough for w2 only.
  server.Put("pods", PodJson("ml", "a", "uid-a", 4, "n1", "0,1,2,3", "Succeeded"));
  REQUIRE(WaitFor([&] { return !got().empty(); }));
  CHECK(got() == std::vector<std::string>{"w2@n1"});
  // c is deleted: n2 is empty, w8 goes there; it waits no more on n1.
  server.Delete("pods", "ml/c");
  REQUIRE(WaitFor([&] { return got().size() == 2; }));
  CHECK(got()[1] == "w8@n2");
  CHECK(model.waits().size() == 0);
  server.Delete("pods", "ml/b");
  CHECK(WaitFor([&] { return model.Node("n1")->free.size() == 8; }));
  CHECK(got().size() == 2);
}

TEST_CASE("model sink: a ResourceClaim whose allocation goes requeues the pods waiting on its node") {
  cluster::ClusterModel model;
  std::vector<std::string> requeued;
  ModelSink sink(model, [&](const cluster::WaitingPod& pod, const std::string& node) {
    requeued.push_back(pod.name + "@" + node);
  });
  sink.ApplyDeviceClass(cluster::testing::GpuClass());
  sink.ApplyNode(cluster::testing::DecodedNode("d1", 0));
  sink.ApplyResourceSlice(cluster::testing::GpuSlice("d1", {0, 1, 2, 3}));
  sink.ApplyResourceClaim(cluster::testing::GpuClaim("c1", "", "d1", {0, 1, 2, 3}, false));
  model.waits().Note({"uid-w", "ml", "w", 2}, {"d1"});
  sink.ApplyResourceClaim(cluster::testing::GpuClaim("c1", "", "d1", {0, 1, 2, 3}, false));
  CHECK(requeued.empty());  // Nothing freed.
  sink.DeleteResourceClaim("c1");
  CHECK(requeued == std::vector<std::string>{"w@d1"});
  CHECK(model.waits().size() == 0);
}

TEST_CASE("start live cluster: DRA's classes, slices and claims are watched into the model") {
  FakeApiServer server;
  server.Put("nodes", NodeJson("d1", 0));  // No nvidia.com/gpu allocatable: DRA may serve its GPUs.
  server.Put("deviceclasses", nlohmann::json::parse(R"({"metadata":{"name":"gpu.nvidia.com"},
    "spec":{"extendedResourceName":"nvidia.com/gpu","selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com'"}}]}})"));
  server.Put("resourceslices", nlohmann::json::parse(R"({"metadata":{"name":"d1-gpus"},"spec":{"driver":"gpu.nvidia.com",
    "nodeName":"d1","pool":{"name":"d1","generation":1,"resourceSliceCount":1},
    "devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-0"}}},{"name":"gpu-1","attributes":{"uuid":{"string":"GPU-1"}}}]}})"));
  std::atomic<int> ready_calls{0};
  LiveOptions options = OptionsFor(server, &ready_calls);
  cluster::ClusterModel model;
  auto api = ConnectApi(options);
  REQUIRE_MESSAGE(api.ok(), api.error());
  auto live = StartLiveCluster(options, *api, model);
  REQUIRE(WaitFor([&] { return live->ready(); }));
  REQUIRE(WaitFor([&] { return model.Node("d1") && model.Node("d1")->usable.size() == 2; }));

  // A claim allocated by kube-scheduler in PreBind, before the pod is bound: its GPU is the pod's.
  server.Put("resourceclaims", nlohmann::json::parse(R"({"metadata":{"name":"p-extended-resources-x","namespace":"ml",
    "uid":"claim-1","annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},
    "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"uid-p","controller":true}]},
    "status":{"allocation":{"devices":{"results":[{"request":"r","driver":"gpu.nvidia.com","pool":"d1","device":"gpu-1"}]}}}})"));
  REQUIRE(WaitFor([&] { return model.PodByUid("uid-p").has_value(); }));
  CHECK(model.PodByUid("uid-p")->gpus == GpuSet::Of({1}));
  CHECK(model.Node("d1")->free == GpuSet::Of({0}));
  server.Delete("resourceclaims", "ml/p-extended-resources-x");
  CHECK(WaitFor([&] { return model.Node("d1")->free.size() == 2; }));
  server.Delete("resourceslices", "d1-gpus");
  CHECK(WaitFor([&] { return model.Node("d1")->usable.empty(); }));
}

}  // namespace
}  // namespace topofit::apiclient
