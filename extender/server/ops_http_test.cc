// Operations: health, readiness, metrics, query endpoints, explain, recording, TCP_NODELAY.
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

#include "extender/server/server_test_util.h"
#include "test/util/temp_dir.h"

namespace topofit::server {
using nlohmann::json;
using testing::GpuPod;
using testing::kDemoNames;
using testing::LiveServer;

TEST_CASE("healthz, readyz, nodes, node, pod") {
  LiveServer srv;
  CHECK(srv.client->Get("/healthz")->status == 200);
  CHECK(srv.client->Get("/readyz")->status == 200);
  auto nodes = srv.client->Get("/api/v1/nodes");
  REQUIRE(nodes);
  json j = json::parse(nodes->body);
  CHECK(j["nodes"].size() == 5);
  CHECK(j["totals"]["usableGpus"] == 36);
  auto node = srv.client->Get("/api/v1/nodes/dgx-v100-1");
  REQUIRE(node);
  json n = json::parse(node->body);
  CHECK(n["linkMatrix"].size() == 8);
  CHECK(n["gpuHolders"][0] == "ml/train-llm-0");
  CHECK(n["topologySource"] == "annotation-profile");
  auto matrix_node = json::parse(srv.client->Get("/api/v1/nodes/pcie-4x-1")->body);
  CHECK(matrix_node["topologySource"] == "annotation-matrix");
  CHECK(matrix_node["linkMatrix"][0][1] == "PIX");
  auto pod = srv.client->Get("/api/v1/pods/ml/train-llm-0");
  REQUIRE(pod);
  CHECK(json::parse(pod->body)["gpus"] == json::array({0, 1, 2, 3}));
  CHECK(srv.client->Get("/api/v1/pods/ml/nope")->status == 404);
}

TEST_CASE("explain: JSON and YAML pods, read-only") {
  LiveServer srv;
  int free_before = srv.app->model().Totals().free_gpus;
  auto res = srv.Post("/api/v1/explain", GpuPod("e1", 4));
  REQUIRE(res);
  CHECK(res->status == 200);
  json j = json::parse(res->body);
  CHECK(j["gpus"] == 4);
  CHECK(j["nodes"].size() == 5);
  CHECK(j["chosen"].is_string());
  CHECK(j["interconnectRate"] == 4);
  bool saw_fail = false;
  for (const auto& n : j["nodes"]) {
    if (n["result"] == "pass") {
      CHECK(n["set"].size() == 4);
      CHECK(n["bandwidthGBps"].get<double>() >= 0);
      CHECK(n["parts"].is_array());
      // Both sides of the trade, in GPUs (the default rate is finite: the ring's price is a number).
      REQUIRE(n["trade"].is_object());
      CHECK(n["trade"]["fragmentationGpus"].is_number());
      CHECK(n["trade"]["interconnectGpus"].get<double>() >= 0);
    } else {
      saw_fail = true;
      CHECK_FALSE(n["reason"].get<std::string>().empty());
    }
  }
  (void)saw_fail;
  auto yaml = srv.client->Post("/api/v1/explain?nodes=a100-1,pcie-1",
                               "metadata: {name: y, namespace: ml}\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 2}}\n",
                               "application/yaml");
  REQUIRE(yaml);
  CHECK(yaml->status == 200);
  CHECK(json::parse(yaml->body)["nodes"].size() == 2);
  auto bad = srv.Post("/api/v1/explain", "{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"0.5\"}}}]}}");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(srv.app->model().Totals().free_gpus == free_before);
}

TEST_CASE("metrics: Prometheus text with verbs, decisions, free GPUs and free sets by shape") {
  LiveServer srv;
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("m1", 2) + R"(,"NodeNames":)" + kDemoNames + "}"));
  auto res = srv.client->Get("/metrics");
  REQUIRE(res);
  const std::string& m = res->body;
  CHECK(m.find("topofit_requests_total{verb=\"filter\"} 1") != std::string::npos);
  CHECK(m.find("# TYPE topofit_request_duration_seconds histogram") != std::string::npos);
  CHECK(m.find("topofit_request_duration_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 1") != std::string::npos);
  CHECK(m.find("topofit_decisions_total{verb=\"filter\",outcome=\"passed\"} 5") != std::string::npos);
  CHECK(m.find("topofit_node_free_gpus{node=\"a100-1\"} 6") != std::string::npos);
  CHECK(m.find("topofit_free_gpus 27") != std::string::npos);
  CHECK(m.find("topofit_node_free_nvlink_sets{node=\"dgx-v100-2\",size=\"4\"} 2") != std::string::npos);
  CHECK(m.find("topofit_free_nvlink_sets{size=\"8\"}") != std::string::npos);
  // GPUs by state: the demo's annotated pods are planned, its unannotated notebook foreign.
  CHECK(m.find("topofit_gpus{state=\"free\"} 27") != std::string::npos);
  CHECK(m.find("topofit_gpus{state=\"planned\"} 8") != std::string::npos);
  CHECK(m.find("topofit_gpus{state=\"foreign\"} 1") != std::string::npos);
  CHECK(m.find("topofit_gpus{state=\"in-use\"} 0") != std::string::npos);
}

TEST_CASE("metrics: API watch state and each node's topology source") {
  LiveServer srv;
  auto metrics = [&] {
    auto res = srv.client->Get("/metrics");
    REQUIRE(res);
    return res->body;
  };
  // The demo cluster has no watch: both kinds render, disconnected.
  std::string m = metrics();
  CHECK(m.find("# TYPE topofit_watch_connected gauge") != std::string::npos);
  CHECK(m.find("topofit_watch_connected{kind=\"nodes\"} 0") != std::string::npos);
  CHECK(m.find("topofit_watch_connected{kind=\"pods\"} 0") != std::string::npos);
  // What the live cluster reports (LiveOptions::on_watch_state) shows up, and goes back.
  srv.app->metrics().SetWatchConnected("nodes", true);
  srv.app->metrics().SetWatchConnected("pods", true);
  m = metrics();
  CHECK(m.find("topofit_watch_connected{kind=\"nodes\"} 1") != std::string::npos);
  CHECK(m.find("topofit_watch_connected{kind=\"pods\"} 1") != std::string::npos);
  srv.app->metrics().SetWatchConnected("pods", false);
  m = metrics();
  CHECK(m.find("topofit_watch_connected{kind=\"nodes\"} 1") != std::string::npos);
  CHECK(m.find("topofit_watch_connected{kind=\"pods\"} 0") != std::string::npos);

  // One series per node, labelled with the source /api/v1/nodes reports as topologySource.
  CHECK(m.find("# TYPE topofit_node_topology_source gauge") != std::string::npos);
  CHECK(m.find("topofit_node_topology_source{node=\"dgx-v100-1\",source=\"annotation-profile\"} 1") !=
        std::string::npos);
  CHECK(m.find("topofit_node_topology_source{node=\"pcie-4x-1\",source=\"annotation-matrix\"} 1") !=
        std::string::npos);
  json nodes = json::parse(srv.client->Get("/api/v1/nodes")->body)["nodes"];
  REQUIRE(nodes.size() == 5);
  for (const auto& n : nodes) {
    std::string line = "topofit_node_topology_source{node=\"" + n["name"].get<std::string>() + "\",source=\"" +
                       n["topologySource"].get<std::string>() + "\"} 1";
    CAPTURE(line);
    CHECK(m.find(line) != std::string::npos);
  }
}

TEST_CASE("record: one JSON line per verb call") {
  topofit::testing::TempDir dir;
  const std::string path = dir.File("record.jsonl");
  {
    LiveServer srv(ServeConfig{}, path);
    REQUIRE(srv.Post("/scheduler/filter", "{\n  \"Pod\": " + GpuPod("r1", 1) + ",\n  \"NodeNames\": [\"a100-1\"]\n}"));
    REQUIRE(srv.Post("/scheduler/prioritize", "garbage"));
  }
  std::ifstream in(path);
  std::string line;
  std::vector<json> lines;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["verb"] == "filter");
  CHECK(lines[0]["request"]["NodeNames"][0] == "a100-1");
  CHECK(lines[0]["response"]["NodeNames"][0] == "a100-1");
  CHECK(lines[0]["ts"].is_number());
  CHECK(lines[1]["request_text"] == "garbage");
  CHECK(lines[1]["status"] == 400);
}

TEST_CASE("TCP_NODELAY is set on the server's accepted sockets") {
  LiveServer srv;
  REQUIRE(srv.client->Get("/healthz"));  // Keep-alive: the accepted socket stays open.
  int port = srv.app->server().port();
  int checked = 0;
  DIR* dir = opendir("/proc/self/fd");
  REQUIRE(dir);
  while (dirent* e = readdir(dir)) {
    int fd = std::atoi(e->d_name);
    if (fd <= 2) continue;
    sockaddr_in local{}, peer{};
    socklen_t len = sizeof(local), plen = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || local.sin_family != AF_INET) continue;
    if (ntohs(local.sin_port) != port) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0) continue;  // The listener.
    int nodelay = 0;
    socklen_t olen = sizeof(nodelay);
    REQUIRE(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &olen) == 0);
    CHECK(nodelay != 0);
    ++checked;
  }
  closedir(dir);
  CHECK(checked >= 1);
}

}  // namespace topofit::server

namespace topofit::server {

TEST_CASE("ops listener: health, metrics and queries on their own port, verbs only on the main one") {
  ServeConfig cfg;
  cfg.server.ops_host = "127.0.0.1";
  cfg.server.ops_port = 0;  // Ephemeral.
  testing::LiveServer srv(cfg);
  int ops_port = srv.app->server().ops_port();
  REQUIRE(ops_port > 0);
  REQUIRE(ops_port != srv.app->server().port());
  httplib::Client ops("127.0.0.1", ops_port);
  for (const char* path : {"/healthz", "/readyz", "/metrics", "/api/v1/nodes", "/api/v1/ui/nodes", "/ui", "/ui/app.js"}) {
    auto on_ops = ops.Get(path);
    REQUIRE(on_ops);
    CHECK_MESSAGE(on_ops->status == 200, path);
    auto on_main = srv.client->Get(path);
    REQUIRE(on_main);
    CHECK_MESSAGE(on_main->status == 404, path);
  }
  std::string filter = R"({"Pod":)" + testing::GpuPod("p", 1) + R"(,"NodeNames":)" + testing::kDemoNames + "}";
  auto verb = srv.Post("/scheduler/filter", filter);
  REQUIRE(verb);
  CHECK(verb->status == 200);
  auto verb_on_ops = ops.Post("/scheduler/filter", filter, "application/json");
  REQUIRE(verb_on_ops);
  CHECK(verb_on_ops->status == 404);
}

TEST_CASE("ops listener: config and flag parsing") {
  ServerOptions o;
  REQUIRE(ParseOpsListen("127.0.0.1:8889", o).ok());
  CHECK(o.ops_host == "127.0.0.1");
  CHECK(o.ops_port == 8889);
  REQUIRE(ParseOpsListen("", o).ok());
  CHECK(o.ops_port == -1);
  CHECK(ParseOpsListen("nope", o).error().find("ops --listen 'nope'") == 0);
  ServeConfig cfg;
  REQUIRE(ApplyConfigYaml("opsListen: \":9090\"\n", cfg).ok());
  CHECK(cfg.server.ops_host == "0.0.0.0");
  CHECK(cfg.server.ops_port == 9090);
}

TEST_CASE("config: filterKeepsBest turns on the filter that passes only the best-scored nodes") {
  ServeConfig cfg;
  CHECK_FALSE(cfg.pipeline.filter_keeps_best);
  REQUIRE(ApplyConfigYaml("filterKeepsBest: true\n", cfg).ok());
  CHECK(cfg.pipeline.filter_keeps_best);
  Status bad = ApplyConfigYaml("filterKeepsBest: sometimes\n", cfg);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("config: line 1") == 0);

  // Served: a 4-GPU pod on the demo cluster passes only where it scores best (a100-1, NV12).
  ServeConfig served;
  served.pipeline.filter_keeps_best = true;
  LiveServer srv(served);
  auto res = srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("best", 4) + R"(,"NodeNames":)" + kDemoNames + "}");
  REQUIRE(res);
  json j = json::parse(res->body);
  CHECK(j["NodeNames"] == json::array({"a100-1"}));
  CHECK(j["FailedNodes"] == json::object());  // The others are left out of the reply, not failed in it.
}

TEST_CASE("config: scoring levels and workload half-life, and GET /api/v1/workload shows what filter saw") {
  ServeConfig cfg;
  CHECK(cfg.pipeline.relative_levels);
  REQUIRE(ApplyConfigYaml("scoring:\n  levels: absolute\n  workloadHalfLife: 500\n", cfg).ok());
  CHECK_FALSE(cfg.pipeline.relative_levels);
  CHECK(cfg.pipeline.workload.half_life == 500);
  Status bad = ApplyConfigYaml("scoring:\n  levels: loud\n", cfg);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error() == "config scoring.levels: 'loud' is not relative or absolute");
  CHECK(ApplyConfigYaml("scoring:\n  workloadHalfLife: 0\n", cfg).error() ==
        "config scoring.workloadHalfLife: 0 is not a pod count >= 1");
  CHECK(cfg.pipeline.tie_break == placement::TieBreak::kFitThenPack);
  REQUIRE(ApplyConfigYaml("scoring:\n  tieBreak: none\n", cfg).ok());
  CHECK(cfg.pipeline.tie_break == placement::TieBreak::kNone);
  CHECK(ApplyConfigYaml("scoring:\n  tieBreak: spread\n", cfg).error() ==
        "config scoring.tieBreak: 'spread' is not fit-then-pack, pack or none");

  LiveServer srv;
  json empty = json::parse(srv.client->Get("/api/v1/workload")->body);
  CHECK(empty["observedGpuPods"] == 0);
  CHECK(empty["shapes"].empty());
  for (int i = 0; i < 2; ++i) {  // The same pod twice (a retried filter) counts once.
    auto res = srv.Post("/scheduler/filter", R"({"Pod":)" + GpuPod("w", 4) + R"(,"NodeNames":)" + kDemoNames + "}");
    REQUIRE(res);
  }
  auto res = srv.client->Get("/api/v1/workload");
  REQUIRE(res);
  CHECK(res->status == 200);
  json w = json::parse(res->body);
  CHECK(w["observedGpuPods"] == 1);
  REQUIRE(w["shapes"].size() == 1);
  CHECK(w["shapes"][0]["gpus"] == 4);
  CHECK(w["shapes"][0]["share"] == 1.0);
  CHECK(w["shapes"][0]["gpuProducts"] == json::array());
  CHECK(w["summary"] == "1 GPU pod seen (half-life 2000): 4 GPUs 100%");
  CHECK(w["gpuModels"].empty());  // No pod bound to a GPU model: nothing reserved for one.
  CHECK(w["shortfallGpus"] == 0.0);
  CHECK(w["gpuModelsSummary"] == "");
  const int free_gpus = w["freeGpus"];
  CHECK(free_gpus > 0);

  // A 1-GPU pod bound to one model by its nodeSelector: 1 of the 5 GPUs asked for.
  const std::string bound =
      R"({"metadata":{"name":"bound","namespace":"t","uid":"uid-bound"},"spec":{"nodeSelector":)"
      R"({"nvidia.com/gpu.product":"Tesla-V100-SXM2-32GB"},"containers":[{"name":"c","resources":)"
      R"({"limits":{"nvidia.com/gpu":"1"}}}]},"status":{}})";
  REQUIRE(srv.Post("/scheduler/filter", R"({"Pod":)" + bound + R"(,"NodeNames":)" + kDemoNames + "}"));
  w = json::parse(srv.client->Get("/api/v1/workload")->body);
  // The bound set, then where the 4-GPU pods of any model go for their best ring.
  REQUIRE(w["gpuModels"].size() == 2);
  CHECK(w["gpuModels"][0]["gpuProducts"] == json::array({"Tesla-V100-SXM2-32GB"}));
  CHECK(w["gpuModels"][0]["bestRing"] == false);
  CHECK(w["gpuModels"][1]["bestRing"] == true);
  CHECK_FALSE(w["gpuModels"][1]["gpuProducts"].empty());
  CHECK(w["gpuModels"][1]["share"].get<double>() == doctest::Approx(0.8).epsilon(1e-3));
  CHECK(w["gpuModels"][0]["share"].get<double>() == doctest::Approx(0.2).epsilon(1e-3));
  CHECK(w["gpuModels"][0]["wantedGpus"].get<double>() == doctest::Approx(0.2 * free_gpus).epsilon(1e-3));
  CHECK(w["gpuModels"][0]["freeGpus"].get<int>() > 0);
  CHECK(w["gpuModelsSummary"].get<std::string>().starts_with(
      "GPUs model-bound pods will want / free: Tesla-V100-SXM2-32GB "));
  // /metrics: the same sets, and the shortfall in all.
  const std::string metrics = srv.client->Get("/metrics")->body;
  const std::string wanted = fmt::format(
      "topofit_gpu_model_wanted_gpus{{gpu_products=\"Tesla-V100-SXM2-32GB\",best_ring=\"false\"}} {:.1f}\n",
      w["gpuModels"][0]["wantedGpus"].get<double>());
  CHECK(metrics.find(wanted) != std::string::npos);
  CHECK(metrics.find(fmt::format(
            "topofit_gpu_model_free_gpus{{gpu_products=\"Tesla-V100-SXM2-32GB\",best_ring=\"false\"}} {}\n",
            w["gpuModels"][0]["freeGpus"].get<int>())) != std::string::npos);
  CHECK(metrics.find(fmt::format("topofit_gpu_model_shortfall_gpus {:.1f}\n", w["shortfallGpus"].get<double>())) !=
        std::string::npos);
}

TEST_CASE("web view: /ui files with their types and no-cache, /api/v1/ui/nodes has every node in full") {
  LiveServer srv;
  struct { const char* path; const char* type; const char* marker; } files[] = {
      {"/ui", "text/html; charset=utf-8", "<script src=\"/ui/app.js\">"},
      {"/ui/", "text/html; charset=utf-8", "id=\"explain-btn\""},
      {"/ui/app.js", "text/javascript; charset=utf-8", "/api/v1/ui/nodes"},
      {"/ui/overview.js", "text/javascript; charset=utf-8", "/api/v1/overview"},
      {"/ui/style.css", "text/css; charset=utf-8", ".gpu.free"},
  };
  for (const auto& f : files) {
    CAPTURE(f.path);
    auto res = srv.client->Get(f.path);
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Content-Type") == f.type);
    CHECK(res->get_header_value("Cache-Control") == "no-cache");
    CHECK(res->body.find(f.marker) != std::string::npos);
  }
  CHECK(srv.client->Get("/ui/nope.js")->status == 404);
  auto ui = srv.client->Get("/api/v1/ui/nodes");
  REQUIRE(ui);
  CHECK(ui->status == 200);
  json j = json::parse(ui->body);
  REQUIRE(j["nodes"].size() == 5);
  for (const auto& n : j["nodes"]) {
    CAPTURE(n["name"]);
    // Each entry is what /api/v1/nodes/NAME answers, plus the node's labels.
    json detail = json::parse(srv.client->Get(("/api/v1/nodes/" + n["name"].get<std::string>()).c_str())->body);
    detail["labels"] = n["labels"];
    CHECK(n == detail);
    CHECK(n["labels"]["kubernetes.io/hostname"] == n["name"]);
  }
  CHECK(j["nodes"][1]["name"] == "dgx-v100-1");
  CHECK(j["nodes"][1]["gpuHolders"][0] == "ml/train-llm-0");
  CHECK(j["nodes"][1]["labels"]["nvidia.com/gpu.product"] == "Tesla-V100-SXM2-32GB");
}

}  // namespace topofit::server
