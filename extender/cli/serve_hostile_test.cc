// The hostile clients of issue 24 against the built `topofit serve`, verbs and ops on separate ports:
// 100 connections that send part of a head and then nothing on the verbs port, 200 on the ops port.
// Before, filter timed out and /healthz stayed silent for 35 s; now both answer at once.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "extender/cli/cli_test_util.h"
#include "test/util/serve_process.h"

namespace {

using Clock = std::chrono::steady_clock;
using topofit::testing::ServeProcess;

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// The first bytes (up to 64 KiB) that arrive on `fd` within `timeout_ms`; "" when none do.
std::string FirstBytes(int fd, int timeout_ms) {
  std::string in;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) > 0) {
    char buf[65536];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) in.assign(buf, static_cast<size_t>(n));
  }
  return in;
}

// One request on a fresh connection; the reply's first bytes (up to 64 KiB), or "" after 5 s.
std::string Exchange(int port, const std::string& request, double* ms) {
  auto start = Clock::now();
  int fd = Connect(port);
  REQUIRE(send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  std::string in = FirstBytes(fd, 5000);
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  close(fd);
  return in;
}

}  // namespace

TEST_CASE("serve: 100 stalled connections on the verbs port and 200 on the ops port, filter and /healthz answer at once") {
  ServeProcess serve({"--ops-listen", "127.0.0.1:0"});
  const int ops = serve.WaitForLoggedPort("ops");
  REQUIRE_MESSAGE(ops > 0, serve.log());
  std::vector<int> stalled;
  for (int i = 0; i < 100; ++i) stalled.push_back(Connect(serve.port()));
  for (int i = 0; i < 200; ++i) stalled.push_back(Connect(ops));
  for (int fd : stalled) REQUIRE(send(fd, "GET /healthz HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL) == 25);
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"t","uid":"u"},"spec":{"containers":[{"name":"c",)"
      R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"NodeNames":["a100-1","pcie-1"]})";
  double filter_ms = 0, healthz_ms = 0;
  std::string filter = Exchange(serve.port(), "POST /scheduler/filter HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                                std::to_string(body.size()) + "\r\n\r\n" + body, &filter_ms);
  std::string healthz = Exchange(ops, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", &healthz_ms);
  MESSAGE("filter in ", filter_ms, " ms, /healthz in ", healthz_ms, " ms, past 300 stalled connections");
  CHECK(filter.find("HTTP/1.1 200 OK") == 0);
  CHECK(filter.find("\"Error\":\"\"") != std::string::npos);
  CHECK(healthz.find("HTTP/1.1 200 OK") == 0);
  CHECK(filter_ms < 1000);
  CHECK(healthz_ms < 1000);
  for (int fd : stalled) close(fd);
}

TEST_CASE("serve: the listener limits are settings - --read-timeout 1s answers a stalled head with a 408 in about a second") {
  ServeProcess serve({"--read-timeout", "1s", "--max-connections", "16", "--request-timeout", "3s"});
  auto start = Clock::now();
  int fd = Connect(serve.port());
  REQUIRE(send(fd, "GET /healthz HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL) == 25);
  const std::string in = FirstBytes(fd, 8000);
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  close(fd);
  MESSAGE("408 after ", s, " s with --read-timeout 1s (the default is 10 s)");
  CHECK(in.find("HTTP/1.1 408") == 0);
  CHECK(s >= 0.9);
  CHECK(s < 5);
  // Past --max-connections 16, the least recently active go first: 40 idle connections, then a
  // request still answers.
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(Connect(serve.port()));
  double ms = 0;
  std::string healthz = Exchange(serve.port(), "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", &ms);
  CHECK(healthz.find("HTTP/1.1 200 OK") == 0);
  int closed = 0;
  for (int fd_idle : idle) {
    pollfd q{fd_idle, POLLIN, 0};
    char c;
    if (poll(&q, 1, 0) > 0 && recv(fd_idle, &c, 1, MSG_DONTWAIT) == 0) ++closed;
    close(fd_idle);
  }
  MESSAGE(closed, " of 40 idle connections closed by the server past --max-connections 16");
  CHECK(closed >= 20);  // 40 + 1 connections against a cap of 16: about 25 go.
}
