#pragma once
// ListenerStats: what an HttpListener's reader thread did (listener_loop.h), for tests, logs and
// metrics. Counters only grow, except `open`; each is read and written atomically, nothing more.

#include <atomic>
#include <cstdint>

namespace topofit::server {

struct ListenerStats {
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> evicted{0};           // Closed to make room (the connection cap, EMFILE).
  std::atomic<uint64_t> refused{0};           // New connections closed at once: workers held all.
  std::atomic<uint64_t> read_timeouts{0};     // Requests that did not arrive in time (408).
  std::atomic<uint64_t> deadline_replies{0};  // 503s for handlers past request_timeout.
  std::atomic<int> open{0};                   // Connections open now.
};

}  // namespace topofit::server
