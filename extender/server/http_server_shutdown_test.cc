// HttpServer::Shutdown, the path `topofit serve` takes on SIGTERM, in-process (so that tsan_tests
// checks it too): clients keep filtering and binding on their own keep-alive connections, an idle
// keep-alive connection is open, and Shutdown drains while they run.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "extender/server/server_test_util.h"

namespace topofit::server {
using testing::GpuPod;
using testing::LiveServer;

TEST_CASE("server: Shutdown with requests in flight and an idle keep-alive connection drains and closes") {
  LiveServer srv;
  const int port = srv.app->server().port();
  httplib::Client idle("127.0.0.1", port);
  idle.set_keep_alive(true);
  REQUIRE(idle.Get("/readyz"));

  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      for (int i = 0; !stop.load(); ++i) {
        std::string name = "d" + std::to_string(t) + "-" + std::to_string(i);
        auto f = c.Post("/scheduler/filter", R"({"Pod":)" + GpuPod(name, 1) + R"(,"NodeNames":)" + testing::kDemoNames + "}",
                        "application/json");
        if (!f) {
          failed++;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        CHECK(f->status == 200);
        answered++;
        auto b = c.Post("/scheduler/bind",
                        R"({"PodName":")" + name + R"(","PodNamespace":"t","PodUID":"uid-)" + name + R"(","Node":"pcie-1"})",
                        "application/json");
        if (b) CHECK(b->status == 200);
      }
    });
  }
  while (answered.load() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  auto start = std::chrono::steady_clock::now();
  CHECK(srv.app->server().Shutdown(std::chrono::seconds(20)));
  CHECK(srv.app->server().in_flight() == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // Nothing is served afterwards: not on the idle connection, not on a new one.
  CHECK_FALSE(idle.Get("/healthz"));
  CHECK_FALSE(httplib::Client("127.0.0.1", port).Get("/healthz"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // Replies read before the stop get counted.
  const int before = answered.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop = true;
  for (auto& c : clients) c.join();
  CHECK(answered.load() == before);
  CHECK(failed.load() > 0);
}

}  // namespace topofit::server
