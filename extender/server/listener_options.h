#pragma once
// ListenerOptions: how an HttpListener listens, and the limits that keep hostile or broken clients
// from holding it (docs/hostile-input.md measures each). The defaults are named constants so that a
// command line (topofit serve's settings table) can show them; `topofit serve` sets every field from
// its settings (ServerOptions), `topofit node`'s ops port keeps the defaults.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "extender/server/tls_credentials.h"

namespace topofit::server {

// Worker threads that run handlers. Reading requests and writing replies that do not leave at once
// happen on the listener's one reader thread: idle, slow and partial clients hold no worker.
inline constexpr int kDefaultThreads = 32;
// An idle keep-alive connection closes after this (Go's http.Transport idles for 90 s).
inline constexpr int kDefaultKeepAliveSeconds = 90;
// A request's head and body must have arrived this long after its first byte (after the accept,
// TLS handshake included, for a connection's first request), else 408 and the connection closes.
inline constexpr int kDefaultReadTimeoutSeconds = 10;
// A reply must have been taken by the client within this, else the connection closes.
inline constexpr int kDefaultWriteTimeoutSeconds = 10;
// A handler's deadline: past it the client gets a 503 at once, and the handler's WorkDeadline
// (base/work_deadline.h) tells its work to stop.
inline constexpr int kDefaultRequestTimeoutSeconds = 10;
inline constexpr size_t kDefaultMaxBodyBytes = 64u << 20;
// Open connections; past it a new one closes the least recently active connection that no worker
// holds (idle and stalled ones first by their nature), or is closed itself when workers hold all.
inline constexpr int kDefaultMaxConnections = 1024;
// Request bodies held at once (arriving, being handled, kept for a connection's next request); a
// body that does not fit is refused with 503 and Retry-After. Never less than max_body_bytes.
inline constexpr size_t kDefaultMaxBufferedBytes = 256u << 20;

// The limits on slow, idle and many clients; `topofit serve` takes each from its settings
// (serve_settings.cc: ServerOptions is a ListenerLimits too).
struct ListenerLimits {
  int keep_alive_seconds = kDefaultKeepAliveSeconds;
  int read_timeout_seconds = kDefaultReadTimeoutSeconds;
  int write_timeout_seconds = kDefaultWriteTimeoutSeconds;
  int request_timeout_seconds = kDefaultRequestTimeoutSeconds;
  int max_connections = kDefaultMaxConnections;
  size_t max_buffered_bytes = kDefaultMaxBufferedBytes;
};

struct ListenerOptions : ListenerLimits {
  std::string host = "0.0.0.0";
  int port = 8888;  // 0: an ephemeral port.
  int threads = kDefaultThreads;
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  // GET requests for these paths go first to any worker, and one more worker serves only them: the
  // probes answer whatever the other paths' traffic.
  std::vector<std::string> probe_paths = {"/healthz", "/readyz"};
  std::shared_ptr<TlsCredentials> tls;  // Null: plain HTTP.
  // The name of the listener's threads in /proc and `top -H`: "NAME-read" (the reader thread; the
  // thread that calls Run() keeps its name when it is the process's main thread, whose name is the
  // process's), "NAME-work", "NAME-probe".
  std::string thread_name = "http";
};

}  // namespace topofit::server
