#pragma once
// HttpListener: an HTTP/1.1 server for topofit's endpoints - POSIX sockets and epoll, Boost.Beast's
// parser for request heads and chunked bodies, one handler call per request.
//
// Why not cpp-httplib's server: Debian ships it prebuilt with a 4 KB receive buffer and a poll
// before every read, so a 3.4 MB full-node body took ~850 reads and half of every filter call's
// transport time went to syscalls. Here a body with a Content-Length is received straight into
// one buffer of that size in as few reads as the socket allows, and a reply leaves in one sendmsg.
//
// Threads: one reader thread (listener_loop.h) accepts, reads every request whole and enforces the
// limits of ListenerOptions; a fixed pool of workers runs the handler on complete requests only and
// sends the reply (what the socket does not take at once, the reader thread sends). So idle, slow
// and partial clients hold no worker, and a hundred - or a thousand - of them cannot stop the
// listener. GET requests for the probe paths (/healthz, /readyz) go first, and one extra worker
// serves only them.
//
// Contract: Bind() then Run() (Run blocks until Stop()); Stop() may come from any thread, also
// before Run(). Keep-alive with no request cap. The handler runs on a worker thread, concurrently
// with other requests' handlers, under a WorkDeadline (base/work_deadline.h): the request's deadline
// (request_timeout_seconds after it arrived, when the client gets a 503 whatever the handler does)
// and the listener's stop, which tells long work to give up. The request and its body live until the
// handler returns. A body over max_body_bytes is not read: the handler gets the request with
// `too_large` set (to word the refusal for its endpoint) and the connection closes after the reply.
// Malformed requests get a JSON 400 (431 for a head over 16 KiB) from the reader thread, and close.
//
// With ListenerOptions::tls the listener speaks HTTPS only: the reader thread runs the TLS handshake
// (within read_timeout_seconds), with the context TlsCredentials hands out at that moment, and calls
// its Refresh() at least once per reload interval. A handshake that fails is logged (peer and
// OpenSSL's reason) and the connection closed; a client that sends plain HTTP gets "400 Client sent
// an HTTP request to an HTTPS server." in plain HTTP, as Go's servers say. A peer that connects and
// closes without a byte (a TCP probe) is not logged.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "extender/server/http_request.h"
#include "extender/server/listener_options.h"
#include "extender/server/listener_stats.h"
#include "extender/server/reply.h"

namespace topofit::server {

class ListenerLoop;
struct Connection;

class HttpListener {
 public:
  using Handler = std::function<Reply(const HttpRequest&)>;

  HttpListener(ListenerOptions options, Handler handler);
  ~HttpListener();  // Stop().
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Creates the socket and listens; port() is valid afterwards. Errors: address in use, bad address.
  Status Bind();
  // Accepts and serves until Stop(); returns at once if Bind() did not succeed.
  void Run();
  // No new connections and no new requests: idle and partial connections close now, a request being
  // handled gets its reply (Connection: close), requests not yet started get a 503, and handlers see
  // WorkDeadline::Expired(). Does not wait. Safe to call more than once.
  void StopAccepting();
  // StopAccepting(), then waits for Run() to return: every handler finished, every connection closed.
  void Stop();

  int port() const { return port_; }
  int in_flight() const { return in_flight_.load(); }  // Handlers running now.
  const ListenerStats& stats() const { return stats_; }

  // Percent-decodes `s` (http_request.h).
  static std::string PercentDecode(std::string_view s, bool plus_is_space) {
    return server::PercentDecode(s, plus_is_space);
  }

 private:
  void StartWorkers();
  void StopWorkers();
  void Dispatch(Connection* c);
  Connection* Take(bool probes_only);
  void Work(bool probes_only);
  void Answer(Connection& c);
  Reply Call(const HttpRequest& req, std::chrono::steady_clock::time_point deadline);

  ListenerOptions options_;
  Handler handler_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // An eventfd, readable once stopping.
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_flight_{0};
  ListenerStats stats_;
  ListenerLoop* loop_ = nullptr;  // While Run() runs.
  std::mutex mu_;  // Guards the queues and exit_.
  std::condition_variable work_ready_, probe_ready_;
  std::deque<Connection*> jobs_, probes_;  // Complete requests waiting for a worker.
  bool exit_ = false;
  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // Held by Run(); Stop() takes it to wait for Run().
};

}  // namespace topofit::server
