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

namespace {

using Clock = std::chrono::steady_clock;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `topofit serve` on an ephemeral loopback port, its stderr in a temp file.
struct ServeProcess {
  pid_t pid = -1;
  std::string log_path;
  int port = 0;

  ServeProcess() {
    const char* dir = std::getenv("TMPDIR");
    log_path = std::string(dir && *dir ? dir : "/tmp") + "/topofit-serve-XXXXXX";
    int fd = mkstemp(log_path.data());
    REQUIRE(fd >= 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(fd, 2);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      execl(TOPOFIT_BINARY, "topofit", "serve", "--listen", "127.0.0.1:0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fd);
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      std::string log = Slurp(log_path);
      size_t at = log.find("listen=127.0.0.1:");
      if (at != std::string::npos) {
        port = std::atoi(log.c_str() + at + 17);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(port > 0, Slurp(log_path));
  }
  ~ServeProcess() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    unlink(log_path.c_str());
  }
  // Waits up to `limit` for the process to exit; returns its wait status, or -1 on timeout.
  int WaitExit(std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

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
  int a = IdleKeepAliveConnection(serve.port);
  int b = IdleKeepAliveConnection(serve.port);
  auto start = Clock::now();
  REQUIRE(kill(serve.pid, SIGTERM) == 0);
  int status = serve.WaitExit(std::chrono::seconds(8));
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  REQUIRE_MESSAGE(status != -1, "still running 8 s after SIGTERM");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(seconds < 5.0);
  std::string log = Slurp(serve.log_path);
  CHECK(log.find("msg=\"shutting down\"") != std::string::npos);
  CHECK(log.find("msg=\"stopped\"") != std::string::npos);
  close(a);
  close(b);
}
