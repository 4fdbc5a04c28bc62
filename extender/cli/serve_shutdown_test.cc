// Runs the built `topofit serve` and stops it with SIGTERM while kube-scheduler-like keep-alive
// connections are open: it must exit promptly (not after the 90 s keep-alive) and cleanly.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

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
