#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "extender/server/server_test_util.h"

namespace topofit::server {
using nlohmann::json;
using testing::GpuPod;
using testing::kDemoNames;
using testing::LiveServer;

namespace {
std::string LowerKeys(std::string s) {
  // Lower-cases the extender's PascalCase envelope keys, as upstream's tests do.
  for (const char* k : {"\"Pod\"", "\"Nodes\"", "\"NodeNames\"", "\"PodName\"", "\"PodNamespace\"", "\"PodUID\"",
                        "\"Node\"", "\"NodeNameToVictims\"", "\"NodeNameToMetaVictims\"", "\"Pods\"", "\"UID\"",
                        "\"NumPDBViolations\""}) {
    std::string key = k, low = key;
    for (char& c : low) c = char(std::tolower(c));
    for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + low.size())) s.replace(at, key.size(), low);
  }
  return s;
}
}  // namespace

TEST_CASE("filter, node-cache mode: PascalCase and lower-case keys") {
  LiveServer srv;
  for (bool lower : {false, true}) {
    std::string body = R"({"Pod":)" + GpuPod("f1", 8) + R"(,"Nodes":null,"NodeNames":)" + kDemoNames + "}";
    if (lower) body = LowerKeys(body);
    auto res = srv.Post("/scheduler/filter", body);
    REQUIRE(res);
    CHECK(res->status == 200);
    json j = json::parse(res->body);
    CHECK(j["Error"] == "");
    CHECK(j["Nodes"].is_null());
    // dgx-v100-1 has 4 free, pcie-1 6 free, pcie-4x-1 only 4 GPUs: never fits 8.
    std::vector<std::string> passed = j["NodeNames"];
    CHECK(std::find(passed.begin(), passed.end(), "dgx-v100-2") != passed.end());
    // A node passed: the failures are left out (ExtenderVerbs::FilterReply).
    CHECK(j["FailedAndUnresolvableNodes"] == json::object());
    CHECK(j["FailedNodes"] == json::object());
    // None passes: every failure with its reason, resolvable or not.
    body = R"({"Pod":)" + GpuPod("f1", 8) + R"(,"Nodes":null,"NodeNames":["dgx-v100-1","pcie-4x-1"]})";
    if (lower) body = LowerKeys(body);
    j = json::parse(srv.Post("/scheduler/filter", body)->body);
    CHECK(j["NodeNames"] == json::array());
    CHECK(j["FailedAndUnresolvableNodes"].contains("pcie-4x-1"));
    CHECK(j["FailedNodes"].contains("dgx-v100-1"));
  }
}

TEST_CASE("filter, full-node mode echoes the kept Node objects, canonical encoding") {
  LiveServer srv;
  std::string nodes = R"({"metadata":{},"items":[{"metadata":{"name":"dgx-v100-2"},"spec":{},"status":{"allocatable":{"nvidia.com/gpu":"8"},"nodeInfo":{"bootID":"x\u003cy"}}},{"metadata":{"name":"pcie-4x-1"},"status":{}}]})";
  auto res = srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("f2", 8) + R"(,"Nodes":)" + nodes + R"(,"NodeNames":null})");
  REQUIRE(res);
  json j = json::parse(res->body);
  CHECK(j["Error"] == "");
  CHECK(j["NodeNames"].is_null());
  REQUIRE(j["Nodes"]["items"].size() == 1);
  CHECK(j["Nodes"]["items"][0]["metadata"]["name"] == "dgx-v100-2");
  CHECK(j["Nodes"]["items"][0]["status"]["nodeInfo"]["bootID"] == "x<y");
  CHECK(j["FailedAndUnresolvableNodes"] == json::object());  // One passed: failures left out.

  // Upstream's canonical ExtenderArgs (both lists; a pod without GPUs passes everything).
  auto canon = srv.Post("/scheduler/filter",
      R"({"Pod":{"metadata":{"name":"podname"},"spec":{"containers":null},"status":{}},"Nodes":{"metadata":{},"items":[{"metadata":{"name":"nodename"},"spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}}]},"NodeNames":["node1"]})");
  REQUIRE(canon);
  json c = json::parse(canon->body);
  CHECK(c["Error"] == "");
  CHECK(c["NodeNames"] == json::array({"node1"}));
}

TEST_CASE("filter, full-node mode in snapshot mode learns Nodes the model does not know") {
  LiveServer srv;  // Snapshot (demo) mode: no watch keeps the nodes current.
  REQUIRE_FALSE(srv.app->model().Node("new-a100"));
  std::string fresh = R"({"metadata":{"name":"new-a100","annotations":{"topofit.io/gpu-topology":"hgx-a100-8"}},)"
                      R"("status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"64","memory":"512Gi"}}})";
  std::string body = R"({"Pod":)" + GpuPod("learn", 8) + R"(,"Nodes":{"items":[)" + fresh + R"(]},"NodeNames":null})";
  auto res = srv.Post("/scheduler/filter", body);
  REQUIRE(res);
  json j = json::parse(res->body);
  CHECK(j["Error"] == "");
  REQUIRE(j["Nodes"]["items"].size() == 1);  // Passes: 8 free NVLink-connected GPUs.
  CHECK(j["Nodes"]["items"][0]["metadata"]["name"] == "new-a100");
  auto node = srv.app->model().Node("new-a100");
  REQUIRE(node);
  CHECK(node->allocatable == 8);
  CHECK(node->free.size() == 8);

  // Live mode leaves the node set to the watch: an unknown node stays unknown and fails.
  srv.app->verbs().SetLearnNodes(false);
  std::string other = R"({"metadata":{"name":"ghost"},"status":{"allocatable":{"nvidia.com/gpu":"8"}}})";
  auto ghost = srv.Post("/scheduler/filter",
                        R"({"Pod":)" + GpuPod("ghost", 1) + R"(,"Nodes":{"items":[)" + other + R"(]},"NodeNames":null})");
  REQUIRE(ghost);
  json g = json::parse(ghost->body);
  CHECK(g["Nodes"]["items"].empty());
  CHECK(g["FailedAndUnresolvableNodes"]["ghost"] == "unknown node");
  CHECK_FALSE(srv.app->model().Node("ghost"));
}

TEST_CASE("prioritize: bare array of integer scores 0..10") {
  LiveServer srv;
  for (bool lower : {false, true}) {
    std::string body = R"({"Pod":)" + GpuPod("p1", 4) + R"(,"Nodes":null,"NodeNames":)" + kDemoNames + "}";
    auto res = srv.Post("/scheduler/prioritize", lower ? LowerKeys(body) : body);
    REQUIRE(res);
    CHECK(res->status == 200);
    json j = json::parse(res->body);
    REQUIRE(j.is_array());
    CHECK(j.size() == 5);
    for (const auto& hp : j) {
      CHECK(hp["Score"].is_number_integer());
      CHECK(hp["Score"] >= 0);
      CHECK(hp["Score"] <= 10);
      CHECK(hp["Host"].is_string());
    }
    CHECK(res->body.find(".0") == std::string::npos);
  }
}

TEST_CASE("filter and prioritize: an empty node name is an unknown node, answered in valid JSON") {
  LiveServer srv;
  // The only name is "": the names decode to an empty block, the view's data() may be null.
  std::string body = R"({"Pod":)" + GpuPod("empty", 1) + R"(,"NodeNames":[""]})";
  auto filter = srv.Post("/scheduler/filter", body);
  REQUIRE(filter);
  json f = json::parse(filter->body);
  CHECK(f["NodeNames"].empty());
  CHECK(f["FailedAndUnresolvableNodes"][""] == "unknown node");
  auto prioritize = srv.Post("/scheduler/prioritize", body);
  REQUIRE(prioritize);
  CHECK(prioritize->body == R"([{"Host":"","Score":0}])");
}

TEST_CASE("bind: reserves, annotates, binds, unknown pod is an Error") {
  LiveServer srv;
  std::string names = kDemoNames;
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("b1", 4) + R"(,"NodeNames":)" + names + "}"));
  auto res = srv.Post("/scheduler/bind",
                      R"({"PodName":"b1","PodNamespace":"t","PodUID":"uid-b1","Node":"dgx-v100-2"})");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == R"({"Error":""})");
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  auto pods = writer.Pods();
  REQUIRE(pods.count("t/b1"));
  CHECK(pods["t/b1"].node == "dgx-v100-2");
  std::string ids = pods["t/b1"].annotations[k8s::kGpuIdsAnnotation];
  CHECK(std::count(ids.begin(), ids.end(), ',') == 3);
  auto info = srv.app->model().PodByUid("uid-b1");
  REQUIRE(info);
  CHECK(info->gpus.ToString() == ids);
  // The pod itself says where and why (the same write as the binding): GPUs, links, bandwidth, the
  // node's score parts. A routine bind writes no Event (bindEvents: notable).
  const std::string placed = pods["t/b1"].annotations[k8s::kPlacementAnnotation];
  CHECK(placed.starts_with("GPUs " + ids + " on dgx-v100-2 over NV"));
  CHECK(placed.find("GB/s predicted ring all-reduce; node scores: ") != std::string::npos);
  CHECK(placed.find("SetQuality") == std::string::npos);
  CHECK(writer.Events().empty());

  auto unknown = srv.Post("/scheduler/bind", LowerKeys(R"({"PodName":"zz","PodNamespace":"t","PodUID":"nope","Node":"a100-1"})"));
  REQUIRE(unknown);
  CHECK(unknown->status == 200);
  json j = json::parse(unknown->body);
  CHECK(j["Error"].get<std::string>().find("unknown to topofit") != std::string::npos);

  // A failing API write releases the reservation.
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("b2", 2) + R"(,"NodeNames":)" + names + "}"));
  writer.FailNextBind("conflict");
  auto failed = srv.Post("/scheduler/bind", R"({"PodName":"b2","PodNamespace":"t","PodUID":"uid-b2","Node":"a100-1"})");
  REQUIRE(failed);
  CHECK(json::parse(failed->body)["Error"].get<std::string>().find("conflict") != std::string::npos);
  CHECK_FALSE(srv.app->model().PodByUid("uid-b2"));
  CHECK(writer.Pods().count("t/b2") == 0);  // Nothing written for a bind that failed.
}

TEST_CASE("bind: with bindEvents all, the placement's words are a GPUsAssigned event too") {
  ServeConfig cfg;
  cfg.bind_events = BindEvents::kAll;
  LiveServer srv(cfg);
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("b1", 4) + R"(,"NodeNames":)" + std::string(kDemoNames) + "}"));
  auto res = srv.Post("/scheduler/bind", R"({"PodName":"b1","PodNamespace":"t","PodUID":"uid-b1","Node":"dgx-v100-2"})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  auto events = writer.Events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ns == "t");
  CHECK(events[0].name == "b1");
  CHECK(events[0].uid == "uid-b1");
  CHECK(events[0].type == "Normal");
  CHECK(events[0].reason == "GPUsAssigned");
  CHECK(events[0].message == writer.Pods()["t/b1"].annotations[k8s::kPlacementAnnotation]);
  CHECK(events[0].message.starts_with("GPUs "));
}

TEST_CASE("filter: a pod turned away everywhere waits where it lacked free GPUs, until bound") {
  LiveServer srv;
  auto& waits = srv.app->model().waits();
  // dgx-v100-1 has 4 free (resolvable), pcie-4x-1 only 4 GPUs (unresolvable): w waits on dgx-v100-1.
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("w", 8) + R"(,"NodeNames":["dgx-v100-1","pcie-4x-1"]})"));
  CHECK(waits.size() == 1);
  // A pod that passes somewhere does not wait.
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("ok", 8) + R"(,"NodeNames":)" + kDemoNames + "}"));
  CHECK(waits.size() == 1);
  // Bound (here to a node kube-scheduler had not sent it): no longer waits.
  auto res = srv.Post("/scheduler/bind", R"({"PodName":"w","PodNamespace":"t","PodUID":"uid-w","Node":"dgx-v100-2"})");
  REQUIRE(res);
  CHECK(res->body == R"({"Error":""})");
  CHECK(waits.size() == 0);
  // Noted again and then freed: dgx-v100-1 frees nothing for 8 GPUs while it has 4 free.
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("w2", 8) + R"(,"NodeNames":["dgx-v100-1"]})"));
  CHECK(waits.Freed("pcie-4x-1", 8).empty());
  CHECK(waits.Freed("dgx-v100-1", 4).empty());
  auto freed = waits.Freed("dgx-v100-1", 8);
  REQUIRE(freed.size() == 1);
  CHECK(freed[0].name == "w2");
  CHECK(freed[0].namespace_ == "t");
  CHECK(freed[0].uid == "uid-w2");
}

TEST_CASE("preempt: meta victims and full victims answer NodeNameToMetaVictims") {
  LiveServer srv;
  // dgx-v100-1 holds ml/train-llm-0 (4 GPUs); an 8-GPU pod needs it evicted.
  std::string meta = R"({"Pod":)" + GpuPod("big", 8) +
      R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{"dgx-v100-1":{"Pods":[{"UID":"7c1d2e3f-0002-4b5c-8d9e-000000000001"}],"NumPDBViolations":0}}})";
  for (bool lower : {false, true}) {
    auto res = srv.Post("/scheduler/preempt", lower ? LowerKeys(meta) : meta);
    REQUIRE(res);
    CHECK(res->status == 200);
    json j = json::parse(res->body);
    REQUIRE(j.contains("NodeNameToMetaVictims"));
    auto& node = j["NodeNameToMetaVictims"]["dgx-v100-1"];
    CHECK(node["Pods"][0]["UID"] == "7c1d2e3f-0002-4b5c-8d9e-000000000001");
    CHECK(node["NumPDBViolations"].is_number_integer());
  }
  std::string full = R"({"Pod":)" + GpuPod("big2", 8) +
      R"(,"NodeNameToVictims":{"dgx-v100-1":{"Pods":[{"metadata":{"name":"train-llm-0","namespace":"ml","uid":"7c1d2e3f-0002-4b5c-8d9e-000000000001"},"spec":{"priority":0}}],"NumPDBViolations":1}},"NodeNameToMetaVictims":null})";
  auto res = srv.Post("/scheduler/preempt", full);
  REQUIRE(res);
  json j = json::parse(res->body);
  CHECK(j["NodeNameToMetaVictims"]["dgx-v100-1"]["NumPDBViolations"] == 1);
}

// Live mode lists nodes first, then pods, and marks the server ready when both are in. In between, the
// model has dgx-v100-1 with all 8 GPUs free although ml/train-llm-0 holds 4 of them: a filter or bind
// answered then would hand those out again. Every verb is refused until the server is ready.
TEST_CASE("verbs are refused until the model is loaded: nodes without their pods give nothing away") {
  auto created = ServeApp::Create(testing::OnLoopback({}, 4), "", nullptr, /*log_decisions=*/false);
  REQUIRE(created);
  ServeApp& app = **created;
  auto demo = k8s::LoadDemoCluster();
  REQUIRE(demo);
  for (const auto& node : demo->nodes) app.model().ApplyNode(node);  // The node list is in; the pods' is not.
  REQUIRE(app.server().Start().ok());
  {
    httplib::Client client("127.0.0.1", app.server().port());
    auto post = [&](const std::string& path, const std::string& body) {
      auto res = client.Post(path.c_str(), body, "application/json");
      REQUIRE(res);
      return *res;
    };
    const std::string filter = R"({"Pod":)" + GpuPod("early", 8) + R"(,"NodeNames":["dgx-v100-1"]})";
    const std::string bind = R"({"PodName":"early","PodNamespace":"t","PodUID":"uid-early","Node":"dgx-v100-1"})";
    const std::string preempt = R"({"Pod":)" + GpuPod("early", 8) + R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{}})";

    auto f = post("/scheduler/filter", filter);
    CHECK(f.status == 200);
    json j = json::parse(f.body);
    CHECK(j["Error"] == "the cluster model is not loaded yet");
    CHECK(j["NodeNames"].is_null());
    auto b = post("/scheduler/bind", bind);
    CHECK(b.status == 200);
    CHECK(json::parse(b.body)["Error"] == "the cluster model is not loaded yet");
    CHECK(post("/scheduler/prioritize", filter).status == 503);
    CHECK(post("/scheduler/prioritize-pods-without-gpus", filter).status == 503);
    CHECK(post("/scheduler/prioritize-pods-without-gpus", R"({"Pod":)" + GpuPod("cpu", 0) + R"(,"NodeNames":["dgx-v100-1"]})")
              .status == 503);
    CHECK(post("/scheduler/preempt", preempt).status == 503);
    CHECK(client.Get("/readyz")->status == 503);
    CHECK(app.model().Totals().reserved_gpus == 0);
    CHECK(app.model().pending().Get("uid-early") == std::nullopt);

    for (const auto& pod : demo->pods) app.model().ApplyPod(pod);
    app.server().SetReady(true);  // What live mode does when both first lists are applied.
    j = json::parse(post("/scheduler/filter", filter).body);
    CHECK(j["Error"] == "");
    CHECK(std::find(j["NodeNames"].begin(), j["NodeNames"].end(), "dgx-v100-1") == j["NodeNames"].end());  // 4 held: 8 do not fit.
    CHECK(json::parse(post("/scheduler/bind", bind).body)["Error"].get<std::string>().find("cannot reserve") !=
          std::string::npos);
  }
  app.server().Stop();
}

}  // namespace topofit::server
