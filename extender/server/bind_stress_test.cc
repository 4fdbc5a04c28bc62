// Concurrent binds over HTTP: many threads, each with its own keep-alive connection, binding pods
// to the same few nodes. No GPU may be given twice.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "extender/server/server_test_util.h"

namespace topofit::server {
using nlohmann::json;
using testing::GpuPod;
using testing::LiveServer;

TEST_CASE("concurrent binds never give a GPU twice") {
  LiveServer srv;
  const int kThreads = 8, kPodsPerThread = 12;
  const char* nodes[] = {"dgx-v100-2", "a100-1", "pcie-1"};
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", srv.app->server().port());
      c.set_keep_alive(true);
      for (int i = 0; i < kPodsPerThread; ++i) {
        std::string name = "s" + std::to_string(t) + "-" + std::to_string(i);
        int gpus = 1 + (i % 3);
        auto f = c.Post("/scheduler/filter", R"({"Pod":)" + GpuPod(name, gpus) + R"(,"NodeNames":["dgx-v100-2","a100-1","pcie-1"]})",
                        "application/json");
        if (!f) continue;
        std::string node = nodes[(t + i) % 3];
        auto b = c.Post("/scheduler/bind",
                        R"({"PodName":")" + name + R"(","PodNamespace":"t","PodUID":"uid-)" + name + R"(","Node":")" + node + "\"}",
                        "application/json");
        if (!b) continue;
        if (json::parse(b->body)["Error"] == "") ok++;
        else refused++;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(ok + refused == kThreads * kPodsPerThread);
  CHECK(ok > 0);
  CHECK(refused > 0);  // 96 pods asking ~190 GPUs of 22 free: most are refused.

  // Every GPU of every node is held by at most one pod, per the model and per the writes.
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  std::map<std::string, std::set<int>> taken;
  for (const auto& n : srv.app->model().Nodes()) {
    for (const auto& p : n.pods) {
      for (int g : p.gpus.Indices()) {
        CHECK_MESSAGE(taken[n.name].insert(g).second, "GPU " << g << " of " << n.name << " held twice");
      }
    }
  }
  std::map<std::string, std::set<int>> written;
  for (const auto& entry : writer.Pods()) {
    const auto& w = entry.second;  // Not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE.
    std::stringstream ids(w.annotations.at(k8s::kGpuIdsAnnotation));
    std::string id;
    while (std::getline(ids, id, ',')) {
      CHECK_MESSAGE(written[w.node].insert(std::stoi(id)).second, "GPU " << id << " of " << w.node << " written twice");
    }
  }
  CHECK(int(writer.bind_count()) == ok.load());
}

}  // namespace topofit::server
