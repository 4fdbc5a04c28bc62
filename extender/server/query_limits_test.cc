// The queries (/api/v1/...) within their bounds: capped in how many run at once (a fast 503 with
// Retry-After beyond it) while filter keeps answering, a YAML bomb refused fast, a query body over
// its limit refused, a stuck query never holding up Shutdown; `serve --config` refuses a bomb too.
#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "extender/k8s/demo_cluster.h"
#include "extender/server/serve_app.h"
#include "extender/server/serve_config.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::GpuPod;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string BillionLaughsPod() {
  std::string s = "metadata: {name: lol, namespace: ml}\nlol0: &a0 [lol]\n";
  for (int i = 1; i < 9; ++i) {
    s += "lol" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) s += (j ? ",*a" : "*a") + std::to_string(i - 1);
    s += "]\n";
  }
  return s;
}

// The demo cluster behind a server whose DELETE /api/v1/pods/... blocks until released: a query
// that holds its slot for as long as the test wants.
struct BlockingQueryServer {
  std::unique_ptr<ServeApp> app;
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  std::atomic<int> blocked{0};

  explicit BlockingQueryServer(int max_queries) {
    ServeConfig cfg;
    cfg.server.max_concurrent_queries = max_queries;
    auto created = ServeApp::Create(testing::OnLoopback(cfg, 8), "", nullptr, /*log_decisions=*/false);
    REQUIRE(created);
    app = std::move(*created);
    app->Load(*k8s::LoadDemoCluster());
    app->server().SetPodDeleter([this](std::string_view, std::string_view) {
      blocked++;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, 20s, [this] { return released; });
      return JsonErrorReply(404, "released");
    });
    REQUIRE(app->server().Start().ok());
  }
  ~BlockingQueryServer() {
    Release();
    app->server().Stop();
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      released = true;
    }
    cv.notify_all();
  }
  int port() { return app->server().port(); }
  // Starts `n` blocking queries on their own threads and waits until all run.
  std::vector<std::thread> Block(int n) {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([this] { httplib::Client(("127.0.0.1"), port()).Delete("/api/v1/pods/ml/x"); });
    for (int i = 0; i < 1000 && blocked.load() < n; ++i) std::this_thread::sleep_for(5ms);
    REQUIRE(blocked.load() == n);
    return threads;
  }
};

const std::string kExplainYaml =
    "metadata: {name: train, namespace: ml}\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 4}}\n";

}  // namespace

TEST_CASE("queries: past max_concurrent_queries a fast 503 with Retry-After, while filter still answers") {
  BlockingQueryServer srv(2);
  std::vector<std::thread> holders = srv.Block(2);
  httplib::Client client("127.0.0.1", srv.port());
  auto start = Clock::now();
  auto refused = client.Post("/api/v1/explain", kExplainYaml, "application/yaml");
  const double refused_ms = Ms(Clock::now() - start);
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->get_header_value("Retry-After") == "1");
  CHECK(json::parse(refused->body)["error"] == "2 queries are running, the most at once; retry");
  CHECK(client.Get("/api/v1/nodes")->status == 503);
  start = Clock::now();
  auto filter = client.Post("/scheduler/filter",
                            R"({"Pod":)" + GpuPod("f", 1) + R"(,"NodeNames":)" + testing::kDemoNames + "}",
                            "application/json");
  const double filter_ms = Ms(Clock::now() - start);
  REQUIRE(filter);
  CHECK(filter->status == 200);
  CHECK(json::parse(filter->body)["Error"] == "");
  CHECK(client.Get("/healthz")->status == 200);
  CHECK(client.Get("/metrics")->status == 200);  // Not a query: not capped.
  MESSAGE("explain refused in ", refused_ms, " ms; filter answered in ", filter_ms, " ms, both at the cap");
  CHECK(refused_ms < 500);
  srv.Release();
  for (auto& t : holders) t.join();
  auto explained = client.Post("/api/v1/explain", kExplainYaml, "application/yaml");
  REQUIRE(explained);
  CHECK(explained->status == 200);  // The slots came back.
}

TEST_CASE("queries: Shutdown waits for the verbs, not for a query that is stuck") {
  BlockingQueryServer srv(4);
  std::vector<std::thread> holders = srv.Block(1);
  auto start = Clock::now();
  CHECK(srv.app->server().Shutdown(10s));
  MESSAGE("Shutdown with a stuck query: ", Ms(Clock::now() - start), " ms");
  CHECK(Clock::now() - start < 1s);
  CHECK(srv.app->server().in_flight() == 1);  // Still running, abandoned.
  srv.Release();
  for (auto& t : holders) t.join();
}

TEST_CASE("queries: a YAML bomb to explain is refused in milliseconds, a body over 1 MiB with a 413") {
  testing::LiveServer srv;
  auto start = Clock::now();
  auto bomb = srv.client->Post("/api/v1/explain", BillionLaughsPod(), "application/yaml");
  const double bomb_ms = Ms(Clock::now() - start);
  REQUIRE(bomb);
  MESSAGE("explain with a billion laughs (", BillionLaughsPod().size(), " bytes): ", bomb->status, " in ", bomb_ms, " ms");
  CHECK(bomb->status == 400);
  CHECK(json::parse(bomb->body)["error"].get<std::string>().find("aliases expand the document by more than 100000 nodes") !=
        std::string::npos);
  CHECK(bomb_ms < 1000);
  auto big = srv.client->Post("/api/v1/explain", kExplainYaml + "# " + std::string(1 << 20, 'x') + "\n", "application/yaml");
  REQUIRE(big);
  CHECK(big->status == 413);
  CHECK(json::parse(big->body)["error"].get<std::string>().find("for /api/v1") != std::string::npos);
  auto ok = srv.client->Post("/api/v1/explain", kExplainYaml, "application/yaml");
  REQUIRE(ok);
  CHECK(ok->status == 200);
}

TEST_CASE("serve config: an alias bomb is refused at once with its line") {
  ServeConfig cfg;
  std::string bomb = "urlPrefix: /scheduler\n";
  bomb += "x0: &a0 [lol]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) bomb += (j ? ",*a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  auto start = Clock::now();
  Status s = ApplyConfigYaml(bomb, cfg);
  CHECK(Clock::now() - start < 1s);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("config: line 7: aliases expand the document by more than 100000 nodes") == 0);
}

}  // namespace topofit::server
