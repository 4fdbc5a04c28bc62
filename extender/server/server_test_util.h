#pragma once
// Test fixtures: OnLoopback, a ServeConfig for a test's server on 127.0.0.1; LiveServer, the demo
// cluster (or a given one) behind a real server there, on an ephemeral port.
#include <httplib.h>

#include <memory>
#include <string>

#include "extender/k8s/demo_cluster.h"
#include "extender/server/serve_app.h"

namespace topofit::server::testing {

// `cfg` served on 127.0.0.1, an ephemeral port, with `threads` workers and a 2 s keep-alive (Stop()
// joins workers idling on keep-alive connections; keep that wait short in tests).
inline ServeConfig OnLoopback(ServeConfig cfg, int threads) {
  cfg.server.host = "127.0.0.1";
  cfg.server.port = 0;
  cfg.server.threads = threads;
  cfg.server.keep_alive_seconds = 2;
  cfg.server.query_cpu_cores = 0;  // Answers are checked here, not the budget (query_runner_test.cc is).
  return cfg;
}

struct LiveServer {
  std::unique_ptr<ServeApp> app;
  std::unique_ptr<httplib::Client> client;

  explicit LiveServer(ServeConfig cfg = {}, std::string record = "") : LiveServer(cfg, *k8s::LoadDemoCluster(), record) {}
  // The same server on the given cluster instead of the demo.
  LiveServer(ServeConfig cfg, const k8s::Snapshot& cluster, std::string record = "") {
    auto created = ServeApp::Create(OnLoopback(std::move(cfg), 16), record, nullptr, /*log_decisions=*/false);
    if (!created) throw std::runtime_error(created.error());
    app = std::move(*created);
    app->Load(cluster);
    auto started = app->server().Start();
    if (!started.ok()) throw std::runtime_error(started.error());
    client = std::make_unique<httplib::Client>("127.0.0.1", app->server().port());
    client->set_keep_alive(true);
    // These tests check answers, not latency: under ThreadSanitizer on a busy machine the 5,000-node
    // overview, computed on a nice-19 query thread, took past httplib's 5 s default (docs/ci.md).
    client->set_read_timeout(60, 0);
  }
  ~LiveServer() {
    client.reset();  // Close our connection first so its worker is not left waiting on it.
    app->server().Stop();
  }

  httplib::Result Post(const std::string& path, const std::string& body) {
    return client->Post(path.c_str(), body, "application/json");
  }
};

inline std::string GpuPod(const std::string& name, int gpus, const std::string& annotations = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"t","uid":"uid-)" + name +
         R"(","annotations":)" + annotations + R"(},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("}}}]},"status":{}})";
}

inline const char* kDemoNames = R"(["dgx-v100-1","dgx-v100-2","a100-1","pcie-1","pcie-4x-1"])";

}  // namespace topofit::server::testing
