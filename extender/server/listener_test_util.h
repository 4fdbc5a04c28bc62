#pragma once
// Test fixture: an HttpListener on 127.0.0.1, an ephemeral port, 4 threads (the rest of the options
// as given), running on a thread of its own until the fixture goes out of scope. A failed Bind
// throws (a failed test case; the end of a perftest). RawConn: a plain TCP client to 127.0.0.1 whose
// bytes are exactly what the test writes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "extender/server/http_listener.h"

namespace topofit::testing {

using server::HttpListener;
using server::ListenerOptions;

struct RunningListener {
  HttpListener listener;
  std::thread thread;

  RunningListener(ListenerOptions options, HttpListener::Handler handler)
      : listener(Loopback(std::move(options)), std::move(handler)) {
    if (Status bound = listener.Bind(); !bound.ok()) throw std::runtime_error("bind: " + bound.error());
    thread = std::thread([this] { listener.Run(); });
  }
  ~RunningListener() {
    listener.Stop();
    thread.join();
  }
  RunningListener(const RunningListener&) = delete;
  RunningListener& operator=(const RunningListener&) = delete;

 private:
  static ListenerOptions Loopback(ListenerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    return o;
  }
};

struct RawConn {
  int fd = -1;
  explicit RawConn(int port) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
  ~RawConn() {
    if (fd >= 0) close(fd);
  }
  RawConn(RawConn&& o) noexcept : fd(o.fd) { o.fd = -1; }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;
  bool ok() const { return fd >= 0; }

  // Sends every byte; false when the peer is gone.
  bool Send(std::string_view s) {
    while (!s.empty()) {
      ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads until one whole reply (framed by Content-Length) arrived, the peer closed, or `limit`
  // passed; returns the bytes read.
  std::string ReadReply(std::chrono::milliseconds limit = std::chrono::seconds(5), bool* closed = nullptr) {
    return ReadReplies(1, limit, closed);
  }
  // The same until `count` whole replies arrived.
  std::string ReadReplies(int count, std::chrono::milliseconds limit = std::chrono::seconds(5), bool* closed = nullptr) {
    std::string in;
    if (closed) *closed = false;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (Replies(in) < count && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      char buf[65536];
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        break;
      }
      in.append(buf, static_cast<size_t>(n));
    }
    return in;
  }
  // True when the peer closes within `limit` (what it sends meanwhile is dropped).
  bool ClosedWithin(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      char buf[65536];
      if (recv(fd, buf, sizeof buf, 0) <= 0) return true;
    }
    return false;
  }
  // How many whole replies (framed by Content-Length) `in` holds.
  static int Replies(const std::string& in) {
    int done = 0;
    size_t at = 0;
    for (;;) {
      size_t head_end = in.find("\r\n\r\n", at);
      if (head_end == std::string::npos) return done;
      size_t cl = in.find("Content-Length: ", at);
      if (cl == std::string::npos || cl > head_end) return done;
      size_t length = std::stoul(in.substr(cl + 16, 20));  // Not the whole rest: called per recv.
      if (in.size() < head_end + 4 + length) return done;
      at = head_end + 4 + length;
      ++done;
    }
  }
};

}  // namespace topofit::testing
