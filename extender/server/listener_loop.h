#pragma once
// ListenerLoop: the reader thread of an HttpListener. One epoll loop accepts connections, runs TLS
// handshakes, reads requests whole (request_reader.h), hands complete ones to the workers, writes the
// replies a worker could not send at once, and enforces every deadline and cap of ListenerOptions:
//
//   fresh connection      handshake and first request within read_timeout, else closed (408 once a
//                         request has begun)
//   idle keep-alive       closed after keep_alive_seconds; at once when the listener stops
//   request arriving      complete within read_timeout of its first byte, else 408 and closed
//   malformed, too large  the reader's 400/431/503 (and the handler's 413) from this thread, closed
//   at a worker           past request_timeout the client gets a 503 at once (the worker's reply,
//                         when it comes, is dropped) and the connection closes
//   reply                 taken by the client within write_timeout, else closed
//   closing after a reply half-closed, and what the client still sends dropped for up to 1 s, so the
//                         close does not reset the reply away
//   connections           at most max_connections: a new one closes the least recently active one
//                         no worker holds - of those that never sent a whole request first - or
//                         itself when workers hold them all; out of descriptors
//                         (EMFILE), the same, else accepting pauses for 100 ms
// No client can hold a worker by sending slowly, not sending, or not reading: workers only ever see
// complete requests and never wait on a socket.
//
// Contract: Run() returns once the stop eventfd turned readable (it closes the listening socket at
// once) and every connection has ended: idle and partial ones close at once, those at a worker after
// its reply, replies in flight when sent or past write_timeout. Return() is the only call for other
// threads.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "extender/server/connection.h"
#include "extender/server/listener_options.h"
#include "extender/server/listener_stats.h"

namespace topofit::server {

class ListenerLoop {
 public:
  using Clock = std::chrono::steady_clock;
  // A complete request: to a worker, which calls Return() when done.
  using Dispatch = std::function<void(Connection*)>;

  // Takes `listen_fd`; `stop_fd` (an eventfd) stays the caller's.
  ListenerLoop(const ListenerOptions& options, int listen_fd, int stop_fd, Dispatch dispatch, ListenerStats* stats);
  ~ListenerLoop();
  ListenerLoop(const ListenerLoop&) = delete;
  ListenerLoop& operator=(const ListenerLoop&) = delete;

  void Run();
  // From a worker: its reply went as far as the socket took; the rest is in c->out.
  void Return(Connection* c);

 private:
  void Wait();
  void OnEvent(void* tag);
  void OnStop();
  void AcceptAll();
  void Adopt(int fd);
  bool EvictOne();
  void Handshake(Connection* c);
  void Read(Connection* c);
  bool Advance(Connection* c, RequestReader::State state);
  void DispatchRequest(Connection* c);
  void DrainReturns();
  void Returned(Connection* c);
  void AfterReply(Connection* c);
  void Answer(Connection* c, const Reply& reply);
  void Write(Connection* c);
  void Linger(Connection* c);
  void Drain(Connection* c);
  void Park(Connection* c);
  void Close(Connection* c);
  void Expire(Connection* c);
  void Sweep();
  void SetDeadline(Connection* c, Clock::time_point at);
  void Watch(Connection* c, uint32_t events);
  void Unwatch(Connection* c);
  int TimeoutMs() const;

  static constexpr size_t kScratchBytes = 64 << 10;
  // Reads per connection per turn, so that one fast sender does not starve the others.
  static constexpr int kReadsPerTurn = 16;

  const ListenerOptions& options_;
  const Dispatch dispatch_;
  ListenerStats* stats_;
  int listen_fd_;
  const int stop_fd_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // An eventfd: workers returned connections.
  bool stopped_ = false;
  bool listen_paused_ = false;
  Clock::time_point now_;
  Clock::time_point listen_resume_;
  Clock::time_point next_deadline_ = Clock::time_point::max();
  ByteBudget budget_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::vector<std::unique_ptr<Connection>> graveyard_;  // Closed during this batch of events.
  std::vector<Connection*> again_;  // To read again without waiting (TLS-buffered, a read cap hit).
  std::unique_ptr<char[]> scratch_;
  std::mutex returned_mu_;
  std::vector<Connection*> returned_;
};

}  // namespace topofit::server
