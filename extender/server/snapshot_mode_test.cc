// Snapshot mode: a snapshot file streamed into the model (ServeApp::LoadFile) gives the model the
// whole-document load gives; DELETE /api/v1/pods tells the model a pod is gone.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "extender/k8s/testing/busy_cluster.h"
#include "extender/server/server_test_util.h"
#include "test/util/temp_dir.h"

namespace topofit::server {
namespace {

using nlohmann::json;

struct Served {
  std::unique_ptr<ServeApp> app;
  std::unique_ptr<httplib::Client> client;
  explicit Served(const std::function<void(ServeApp&)>& load) {
    auto created = ServeApp::Create(testing::OnLoopback({}, 4), "", nullptr, /*log_decisions=*/false);
    REQUIRE(created.ok());
    app = std::move(*created);
    load(*app);
    REQUIRE(app->server().Start().ok());
    client = std::make_unique<httplib::Client>("127.0.0.1", app->server().port());
  }
  ~Served() {
    client.reset();
    app->server().Stop();
  }
  std::string Get(const std::string& path) {
    auto res = client->Get(path);
    REQUIRE(res);
    return std::to_string(res->status) + " " + res->body;
  }
};

std::string Pod(const std::string& name, const std::string& node, const std::string& ids, int gpus,
                const std::string& phase = "Running") {
  return fmt::format(
      R"({{"kind":"Pod","metadata":{{"name":"{0}","namespace":"ns","uid":"uid-{0}"{1}}},"spec":{{"nodeName":"{2}","containers":[{{"resources":{{"requests":{{"cpu":"2","memory":"4Gi"}},"limits":{{"nvidia.com/gpu":"{3}"}}}}}}]}},"status":{{"phase":"{4}"}}}})",
      name, ids.empty() ? "" : fmt::format(R"(,"annotations":{{"topofit.io/gpu-ids":"{}"}})", ids), node, gpus, phase);
}

}  // namespace

TEST_CASE("snapshot mode: the streamed file gives the model the whole-document load gives") {
  std::vector<std::string> items;
  // Pods before their nodes (parked, then attached), two claiming the same GPU, one on a node that
  // never comes, one without gpu-ids, one finished, one pending.
  items.push_back(Pod("early", k8s::testing::Ec2NodeName(5), "0,1", 2));
  items.push_back(Pod("clash-a", k8s::testing::Ec2NodeName(6), "2,3", 2));
  items.push_back(Pod("clash-b", k8s::testing::Ec2NodeName(6), "3,4", 2));
  items.push_back(Pod("lost", "no-such-node", "0", 1));
  for (int i = 0; i < 40; ++i) items.push_back(R"({"kind":"Node",)" + k8s::testing::RealisticNode(i).substr(1));
  for (int i = 0; i < 40; i += 3) items.push_back(Pod(fmt::format("p{}", i), k8s::testing::Ec2NodeName(i), "4,5,6,7", 4));
  items.push_back(Pod("no-ids", k8s::testing::Ec2NodeName(7), "", 2));
  items.push_back(Pod("done", k8s::testing::Ec2NodeName(8), "0", 1, "Succeeded"));
  items.push_back(Pod("waiting", "", "", 2, "Pending"));
  std::string text = R"({"apiVersion":"v1","items":[)";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ",\n" : "") + items[i];
  text += R"(],"kind":"List","metadata":{"resourceVersion":""}})";
  topofit::testing::TempDir dir;
  const std::string path = dir.Write("snapshot.json", text);

  Served whole([&](ServeApp& a) {
    auto snap = k8s::LoadSnapshot(text);
    REQUIRE(snap.ok());
    a.Load(*snap);
  });
  Served streamed([&](ServeApp& a) {
    auto loaded = a.LoadFile(path);
    REQUIRE_MESSAGE(loaded.ok(), loaded.error());
    CHECK(loaded->nodes == 40);
    CHECK(loaded->pods == items.size() - 40);
  });
  CHECK(streamed.Get("/readyz") == "200 ok\n");
  CHECK(streamed.Get("/api/v1/nodes") == whole.Get("/api/v1/nodes"));
  for (int i = 0; i < 40; ++i) {
    std::string node = "/api/v1/nodes/" + k8s::testing::Ec2NodeName(i);
    CHECK(streamed.Get(node) == whole.Get(node));
  }
  for (const char* pod : {"early", "clash-a", "clash-b", "lost", "p3", "no-ids", "done"}) {
    std::string at = std::string("/api/v1/pods/ns/") + pod;
    CHECK(streamed.Get(at) == whole.Get(at));
  }
  CHECK(json::parse(streamed.Get("/api/v1/pods/ns/early").substr(4))["node"] == k8s::testing::Ec2NodeName(5));
}

TEST_CASE("snapshot mode: a file that does not load leaves the server not ready, with the error") {
  Served bad([&](ServeApp& a) {
    auto loaded = a.LoadFile("/nonexistent.json");
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().find("cannot open /nonexistent.json") == 0);
  });
  CHECK(bad.Get("/readyz").starts_with("503 "));
}

TEST_CASE("snapshot mode: DELETE /api/v1/pods frees the pod's GPUs and lets its name be bound again") {
  testing::LiveServer srv;  // The demo cluster, loaded as snapshot mode does.
  auto del = srv.client->Delete("/api/v1/pods/ml/train-llm-0");
  REQUIRE(del);
  CHECK(del->status == 200);
  CHECK(del->body == R"({"deleted":"ml/train-llm-0","freedGpus":4})");
  CHECK_FALSE(srv.app->model().PodByName("ml", "train-llm-0"));
  auto again = srv.client->Delete("/api/v1/pods/ml/train-llm-0");
  REQUIRE(again);
  CHECK(again->status == 404);
  CHECK(json::parse(again->body)["error"] == "pod ml/train-llm-0 is not in the model");

  // A pod bound through the verbs, deleted, then bound again under the same name.
  std::string pod = R"({"metadata":{"name":"re","namespace":"t","uid":"uid-re"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"8"}}}]}})";
  std::string names = R"(["dgx-v100-1","dgx-v100-2","a100-1","pcie-1","pcie-4x-1"])";
  std::string bind = R"({"PodName":"re","PodNamespace":"t","PodUID":"uid-re","Node":"dgx-v100-2"})";
  const int held = srv.app->model().Totals().held_gpus;
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + pod + R"(,"NodeNames":)" + names + "}"));
    auto bound = srv.Post("/scheduler/bind", bind);
    REQUIRE(bound);
    CHECK(bound->body == R"({"Error":""})");
    REQUIRE(srv.app->model().PodByName("t", "re"));
    CHECK(srv.app->model().Totals().held_gpus == held + 8);
    auto gone = srv.client->Delete("/api/v1/pods/t/re");
    REQUIRE(gone);
    CHECK(gone->body == R"({"deleted":"t/re","freedGpus":8})");
    CHECK(srv.app->model().Totals().held_gpus == held);
  }
}

TEST_CASE("snapshot mode: without a snapshot (live mode) DELETE /api/v1/pods is refused") {
  auto app = ServeApp::Create(testing::OnLoopback({}, ServeConfig{}.server.threads), "", nullptr, false);
  REQUIRE(app.ok());
  REQUIRE((*app)->server().Start().ok());
  {
    httplib::Client c("127.0.0.1", (*app)->server().port());
    auto res = c.Delete("/api/v1/pods/ml/x");
    REQUIRE(res);
    CHECK(res->status == 405);
    CHECK(res->body.find("deleted through the API server") != std::string::npos);
  }
  (*app)->server().Stop();
}

}  // namespace topofit::server
