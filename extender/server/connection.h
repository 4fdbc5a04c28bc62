#pragma once
// Connection: one accepted connection of an HttpListener - its socket, the request being read, the
// reply on its way out, where it stands and until when.
//
// Contract: the reader thread (listener_loop.h) owns a connection, except while a worker holds it
// (at_worker): then the worker may read `reader`'s request, and whoever wins `claim` - the worker
// with its reply, or the reader thread when the request's deadline passes first - writes `out` and
// the socket. A worker hands the connection back with ListenerLoop::Return, under a mutex: what it
// wrote is then the reader thread's again.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "extender/server/http_socket.h"
#include "extender/server/request_reader.h"

namespace topofit::server {

struct Connection {
  using Clock = std::chrono::steady_clock;
  enum class Phase {
    kHandshake,  // TLS, before the first request.
    kReading,    // Waiting for a request or reading one (the reader says whether it has begun).
    kWriting,    // `out` leaves as the client takes it.
    kLingering,  // Closed for writing; what the client still sends is dropped, for a moment.
    kParked,     // Done, but a worker still holds its request: closed once Return()ed.
  };
  enum Claim : int { kUnclaimed = 0, kByWorker = 1, kByDeadline = 2 };

  Connection(int fd, size_t max_body_bytes, ByteBudget* budget) : socket(fd), reader(max_body_bytes, budget) {}

  Socket socket;
  RequestReader reader;
  Outgoing out;
  Phase phase = Phase::kReading;
  bool at_worker = false;    // A worker has the request (the reader thread sets and clears it).
  bool served = false;       // A whole request of it has reached a worker: a client that speaks HTTP.
  bool close_after = false;  // The connection ends once `out` has gone...
  bool linger = false;       // ...after dropping what the client still sends, for a moment.
  bool failed = false;       // The worker's write failed: close.
  bool dead = false;         // Closed; freed after the current batch of events.
  uint32_t events = 0;       // What epoll watches for it now; 0: not registered.
  size_t index = 0;          // In the loop's list.
  Clock::time_point deadline = Clock::time_point::max();  // Of the phase (see listener_loop.cc).
  Clock::time_point last_active;
  Clock::time_point work_deadline;  // The handler's WorkDeadline.
  std::atomic<int> claim{kUnclaimed};
};

}  // namespace topofit::server
