// libFuzzer target: HttpListener on any byte stream. Each input is sent on its own connection to a
// listener on 127.0.0.1 (started once), the client's side then closed for writing; the server must
// answer or close, never crash, and hand every Content-Length body to the handler with its zero
// padding.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "extender/server/http_listener.h"

namespace {

using topofit::server::HttpListener;
using topofit::server::HttpRequest;
using topofit::server::Reply;

Reply Check(const HttpRequest& req) {
  if (req.padded)
    for (size_t i = 0; i < HttpRequest::kBodyPadding; ++i)
      if (req.body.data()[req.body.size() + i] != 0) __builtin_trap();
  Reply r;
  r.body = std::string(req.method) + " " + req.path + " " + req.QueryParam("q") + " " + std::to_string(req.body.size());
  return r;
}

int Port() {
  static const int port = [] {
    topofit::server::ListenerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 2;
    o.read_timeout_seconds = 1;
    o.max_body_bytes = 1 << 16;
    auto* listener = new HttpListener(o, Check);  // Lives for the process.
    if (!listener->Bind().ok()) __builtin_trap();
    std::thread([listener] { listener->Run(); }).detach();
    return listener->port();
  }();
  return port;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int port = Port();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = -1;
  // A connect can fail without the listener being at fault: on a busy machine it blocks long enough
  // for libFuzzer's timer signal to interrupt it (EINTR, seen on a loaded 2-core machine), or the
  // accept queue is full: retry for 10 s before calling the listener dead.
  for (int attempt = 0;; ++attempt) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) break;
    const int error = errno;
    close(fd);
    if (attempt == 1000) {
      std::fprintf(stderr, "http_listener_fuzz: connect: %s: the listener died\n", std::strerror(error));
      __builtin_trap();
    }
    if (attempt == 0) std::fprintf(stderr, "http_listener_fuzz: connect: %s: retrying\n", std::strerror(error));
    usleep(10000);
  }
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  for (size_t sent = 0; sent < size;) {
    ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // The server closed first (a malformed head): fine.
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  char buf[65536];
  while (recv(fd, buf, sizeof buf, 0) > 0) {
  }
  close(fd);
  return 0;
}
