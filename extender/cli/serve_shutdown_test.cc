// Runs the built `topofit serve` and stops it with SIGTERM while kube-scheduler-like keep-alive
// connections are open, and while hostile requests are in flight (alias bombs to explain, a body
// half sent, stalled heads): it must exit promptly (not after the 90 s keep-alive, not after a
// request's work) and cleanly.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test/util/serve_process.h"

namespace {

using Clock = std::chrono::steady_clock;
using topofit::testing::ServeProcess;

// A keep-alive connection that has answered one request and now idles, as kube-scheduler's do.
int IdleKeepAliveConnection(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  std::string request = "GET /readyz HTTP/1.1\r\nHost: topofit\r\nConnection: keep-alive\r\n\r\n";
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf);
  REQUIRE(n > 0);
  CHECK(std::string(buf, n).find("200 OK") != std::string::npos);
  return fd;
}

// A connection with `bytes` sent and nothing more (-1 when the connect failed).
int Sent(int port, const std::string& bytes) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  if (!bytes.empty() && send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Nine levels of nine aliases (9^9 strings expanded) in a pod manifest, POSTed to explain.
std::string BombRequest() {
  std::string pod = "metadata: {name: lol, namespace: ml}\nl0: &a0 [lol]\n";
  for (int i = 1; i < 9; ++i) {
    pod += "l" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) pod += (j ? ",*a" : "*a") + std::to_string(i - 1);
    pod += "]\n";
  }
  return "POST /api/v1/explain HTTP/1.1\r\nHost: t\r\nContent-Type: application/yaml\r\nContent-Length: " +
         std::to_string(pod.size()) + "\r\n\r\n" + pod;
}

}  // namespace

TEST_CASE("serve: SIGTERM with idle keep-alive connections exits at once, status 0") {
  ServeProcess serve;
  int a = IdleKeepAliveConnection(serve.port());
  int b = IdleKeepAliveConnection(serve.port());
  auto start = Clock::now();
  REQUIRE(kill(serve.pid(), SIGTERM) == 0);
  int status = serve.WaitExit(std::chrono::seconds(8));
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  REQUIRE_MESSAGE(status != -1, "still running 8 s after SIGTERM");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(seconds < 5.0);
  std::string log = serve.log();
  CHECK(log.find("msg=\"shutting down\"") != std::string::npos);
  CHECK(log.find("msg=\"stopped\"") != std::string::npos);
  close(a);
  close(b);
}

TEST_CASE("serve: SIGTERM while alias bombs, a half-sent body and stalled heads are in flight exits at once, status 0") {
  ServeProcess serve;
  std::vector<int> held;
  for (int i = 0; i < 50; ++i) held.push_back(Sent(serve.port(), "POST /scheduler/filter HTTP/1.1\r\nHost: t\r\nConte"));
  held.push_back(Sent(serve.port(), "POST /api/v1/explain HTTP/1.1\r\nHost: t\r\nContent-Length: 900000\r\n\r\nmetadata:"));
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};
  std::vector<std::thread> bombers;
  for (int t = 0; t < 4; ++t) {
    bombers.emplace_back([&] {
      const std::string bomb = BombRequest();
      while (!stop.load()) {
        int fd = Sent(serve.port(), bomb);
        if (fd < 0) break;  // The listener has closed.
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0 && std::string(buf, n).find("HTTP/1.1 400") == 0) refused++;
        close(fd);
      }
    });
  }
  while (refused.load() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto start = Clock::now();
  REQUIRE(kill(serve.pid(), SIGTERM) == 0);
  int status = serve.WaitExit(std::chrono::seconds(8));
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  for (auto& t : bombers) t.join();
  for (int fd : held) close(fd);
  REQUIRE_MESSAGE(status != -1, "still running 8 s after SIGTERM");
  MESSAGE("exited ", seconds, " s after SIGTERM; ", refused.load(), " bombs refused before it");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(seconds < 3.0);
  CHECK(serve.log().find("msg=\"stopped\"") != std::string::npos);
}
