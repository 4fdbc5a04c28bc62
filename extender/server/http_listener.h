#pragma once
// HttpListener: an HTTP/1.1 server for topofit's endpoints - POSIX sockets, Boost.Beast's parser for
// request heads and chunked bodies, one handler call per request.
//
// Why not cpp-httplib's server: Debian ships it prebuilt with a 4 KB receive buffer and a poll
// before every read, so a 3.4 MB full-node body took ~850 reads and half of every filter call's
// transport time went to syscalls. Here a body with a Content-Length is received straight into
// one buffer of that size in as few reads as the socket allows, and a reply leaves in one sendmsg.
//
// Contract: Bind() then Run() (Run blocks until Stop()); Stop() may come from any thread, also
// before Run(). Connections are served by a fixed pool of worker threads, one connection per
// worker at a time (kube-scheduler keeps one for its serial cycle plus one per concurrent bind);
// further connections wait for a free worker. Keep-alive with no request cap; an idle connection
// closes after keep_alive_seconds, a request that stalls after read_timeout_seconds. The handler
// runs on a worker thread, concurrently with other connections' handlers; the body it sees lives
// until it returns. A body over max_body_bytes is not read: the handler gets the request with
// `too_large` set (to word the refusal for its endpoint) and the connection closes after the reply.
//
// With ListenerOptions::tls the listener speaks HTTPS only: a worker runs the TLS handshake (within
// read_timeout_seconds) before the first request, with the context TlsCredentials hands out at that
// moment; the accept loop calls its Refresh() at least once per reload interval. A handshake that
// fails is logged (peer and OpenSSL's reason) and the connection closed; a client that sends plain
// HTTP gets "400 Client sent an HTTP request to an HTTPS server." in plain HTTP, as Go's servers say.
// A peer that connects and closes without a byte (a TCP probe) is not logged.

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "extender/server/reply.h"
#include "extender/server/tls_credentials.h"

namespace topofit::server {

struct HttpRequest {
  std::string_view method;  // As sent: "GET", "POST"...
  std::string path;         // Percent-decoded, without the query.
  std::string query;        // The raw text after '?', "" when none.
  std::string_view body;
  // At least kBodyPadding readable zero bytes follow the body (a parser may read past the end).
  bool padded = false;
  static constexpr size_t kBodyPadding = 64;
  uint64_t content_length = 0;  // As declared (0 for chunked bodies).
  bool too_large = false;       // Declared or chunked body over max_body_bytes; body is empty.

  // The value of query parameter `key`, percent-decoded ('+' is a space); "" when absent.
  std::string QueryParam(std::string_view key) const;
};

struct ListenerOptions {
  std::string host = "0.0.0.0";
  int port = 8888;  // 0: an ephemeral port.
  int threads = 32;
  int keep_alive_seconds = 90;
  int read_timeout_seconds = 30;
  int write_timeout_seconds = 30;
  size_t max_body_bytes = 64u << 20;
  std::shared_ptr<TlsCredentials> tls;  // Null: plain HTTP.
};

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
  // No new connections and no new requests: idle connections close now, a request being handled
  // gets its reply and then its connection closes. Does not wait. Safe to call more than once.
  void StopAccepting();
  // StopAccepting(), then waits for Run() to return and every worker to finish.
  void Stop();

  int port() const { return port_; }
  int in_flight() const { return in_flight_.load(); }  // Handlers running now.

  // Percent-decodes `s` ("%2F" -> "/"); with plus_is_space, '+' becomes ' ' (query strings).
  static std::string PercentDecode(std::string_view s, bool plus_is_space);

 private:
  void Work();
  void Serve(int fd);

  ListenerOptions options_;
  Handler handler_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // An eventfd, readable once stopping: every wait polls it too.
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};
  std::atomic<int> in_flight_{0};
  std::mutex mu_;  // Guards queue_, active_ and workers_.
  std::condition_variable queued_;
  std::deque<int> queue_;  // Accepted connections waiting for a worker.
  std::vector<int> active_;  // Connections a worker is serving.
  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // Held by Run() while it accepts; Stop() takes it to wait for Run().
};

}  // namespace topofit::server
