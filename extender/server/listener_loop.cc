#include "extender/server/listener_loop.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "extender/server/http_wire.h"
#include "extender/server/tls_handshake.h"

namespace topofit::server {
namespace {

// epoll tags for the three descriptors that are not connections.
char kListenTag, kStopTag, kWakeTag;

constexpr auto kListenPause = std::chrono::milliseconds(100);

std::chrono::seconds Seconds(int s) { return std::chrono::seconds(std::max(0, s)); }

}  // namespace

ListenerLoop::ListenerLoop(const ListenerOptions& options, int listen_fd, int stop_fd, Dispatch dispatch,
                           ListenerStats* stats)
    : options_(options),
      dispatch_(std::move(dispatch)),
      stats_(stats),
      listen_fd_(listen_fd),
      stop_fd_(stop_fd),
      budget_(std::max(options.max_buffered_bytes, options.max_body_bytes + HttpRequest::kBodyPadding)),
      scratch_(std::make_unique<char[]>(kScratchBytes)) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  for (auto [fd, tag] : {std::pair{listen_fd_, &kListenTag}, {stop_fd_, &kStopTag}, {wake_fd_, &kWakeTag}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = tag;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
}

ListenerLoop::~ListenerLoop() {
  DrainReturns();  // Workers are done: nothing is at a worker any more.
  while (!conns_.empty()) {
    conns_.back()->at_worker = false;
    Close(conns_.back().get());
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  close(wake_fd_);
  close(epoll_fd_);
}

void ListenerLoop::Run() {
  while (!(stopped_ && conns_.empty())) {
    Wait();
    if (options_.tls) options_.tls->Refresh();
    std::vector<Connection*> again;
    again.swap(again_);  // What these reads leave unread waits for the next turn.
    for (Connection* c : again)
      if (!c->dead && !c->at_worker && c->phase == Connection::Phase::kReading) Read(c);
    if (listen_paused_ && now_ >= listen_resume_ && !stopped_) {
      listen_paused_ = false;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = &kListenTag;
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    }
    if (now_ >= next_deadline_) Sweep();
    graveyard_.clear();
  }
}

void ListenerLoop::Wait() {
  epoll_event events[128];
  int n = epoll_wait(epoll_fd_, events, 128, again_.empty() ? TimeoutMs() : 0);
  now_ = Clock::now();
  for (int i = 0; i < n; ++i) OnEvent(events[i].data.ptr);
}

int ListenerLoop::TimeoutMs() const {
  Clock::time_point until = next_deadline_;
  // With TLS the loop wakes at least once per reload interval to look at the files.
  if (options_.tls) until = std::min(until, Clock::now() + std::clamp<Clock::duration>(
                                                              options_.tls->reload_interval(),
                                                              std::chrono::milliseconds(10), std::chrono::seconds(60)));
  if (listen_paused_) until = std::min(until, listen_resume_);
  if (until == Clock::time_point::max()) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60'000));
}

void ListenerLoop::OnEvent(void* tag) {
  if (tag == &kListenTag) return AcceptAll();
  if (tag == &kStopTag) return OnStop();
  if (tag == &kWakeTag) return DrainReturns();
  auto* c = static_cast<Connection*>(tag);
  if (c->dead) return;
  switch (c->phase) {
    case Connection::Phase::kHandshake: return Handshake(c);
    case Connection::Phase::kReading: return Read(c);
    case Connection::Phase::kWriting: return Write(c);
    case Connection::Phase::kLingering: return Drain(c);
    case Connection::Phase::kParked: return;
  }
}

// No new connections and no new requests: the listening socket closes, idle and partial
// connections close; replies being written and requests at a worker finish first.
void ListenerLoop::OnStop() {
  if (stopped_) return;
  stopped_ = true;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, stop_fd_, nullptr);
  if (listen_fd_ >= 0) {
    if (!listen_paused_) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
    close(listen_fd_);  // The kernel resets what is still in the backlog.
    listen_fd_ = -1;
  }
  std::vector<Connection*> idle;
  for (auto& c : conns_)
    if (!c->at_worker && (c->phase == Connection::Phase::kReading || c->phase == Connection::Phase::kHandshake))
      idle.push_back(c.get());
  for (Connection* c : idle) Close(c);
}

void ListenerLoop::AcceptAll() {
  for (int i = 0; i < 64 && listen_fd_ >= 0; ++i) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: make room, or stop taking connections for a moment (not a spin).
        if (!EvictOne()) {
          listen_paused_ = true;
          listen_resume_ = now_ + kListenPause;
          epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
          return;
        }
        continue;
      }
      return;  // EAGAIN: all taken; ECONNABORTED and the like: the next event.
    }
    stats_->accepted++;
    if (static_cast<int>(conns_.size()) >= std::max(1, options_.max_connections) && !EvictOne()) {
      stats_->refused++;
      close(fd);
      continue;
    }
    Adopt(fd);
  }
}

void ListenerLoop::Adopt(int fd) {
  // Without it keep-alive replies stall ~40 ms on delayed ACKs.
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto owned = std::make_unique<Connection>(fd, options_.max_body_bytes, &budget_);
  Connection* c = owned.get();
  c->index = conns_.size();
  c->last_active = now_;
  conns_.push_back(std::move(owned));
  stats_->open++;
  if (options_.tls) {
    SslPtr ssl = NewServerSsl(options_.tls->Context().get(), fd);
    if (!ssl) return Close(c);
    c->socket.set_tls(std::move(ssl));
    c->phase = Connection::Phase::kHandshake;
  }
  SetDeadline(c, now_ + Seconds(options_.read_timeout_seconds));
  Watch(c, EPOLLIN);
}

// Closes the least recently active connection no worker holds, of those that never sent a whole
// request (stalled, slow, still connecting) if there is one: a keep-alive client between two
// requests - kube-scheduler - goes only when every connection left has been served. False when
// workers hold them all. (Under a flood of new connections past the cap, plain LRU closed
// kube-scheduler's connection whenever it idled for the second the flood took to turn over the cap.)
bool ListenerLoop::EvictOne() {
  Connection* oldest = nullptr;
  auto before = [](const Connection& a, const Connection& b) {
    return a.served != b.served ? !a.served : a.last_active < b.last_active;
  };
  for (auto& c : conns_)
    if (!c->at_worker && (!oldest || before(*c, *oldest))) oldest = c.get();
  if (!oldest) return false;
  stats_->evicted++;
  Close(oldest);
  return true;
}

void ListenerLoop::Handshake(Connection* c) {
  HandshakeResult r = StepHandshake(c->socket.ssl(), c->socket.fd());
  switch (r.step) {
    case HandshakeStep::kDone:
      c->last_active = now_;
      c->phase = Connection::Phase::kReading;
      return Read(c);
    case HandshakeStep::kWouldBlock: return Watch(c, r.wait);
    case HandshakeStep::kPlainHttp:
      // Answered in plain text, as Go's servers do.
      c->socket.set_tls(nullptr);
      c->out = Outgoing{std::string(kPlainHttpOnTls), {}, 0};
      c->close_after = c->linger = true;
      c->phase = Connection::Phase::kWriting;
      SetDeadline(c, now_ + Seconds(options_.write_timeout_seconds));
      return Write(c);
    case HandshakeStep::kFailed:
      c->socket.set_tls(nullptr);  // No close_notify on a failed handshake.
      return Close(c);
  }
}

void ListenerLoop::Read(Connection* c) {
  for (int round = 0; round < kReadsPerTurn; ++round) {
    std::span<char> body = c->reader.BodySpace();
    Io io = body.empty() ? c->socket.Read(scratch_.get(), kScratchBytes) : c->socket.Read(body.data(), body.size());
    if (io.status == IoStatus::kWouldBlock) return Watch(c, io.wait);
    if (io.status != IoStatus::kOk) return Close(c);  // The client went away, mid-request or not.
    const bool began = c->reader.started();
    c->last_active = now_;
    RequestReader::State state = body.empty() ? c->reader.Received({scratch_.get(), io.bytes})
                                              : c->reader.ReceivedInBody(io.bytes);
    // A request's clock starts at its first byte (a fresh connection's at the accept).
    if (!began) SetDeadline(c, std::min(c->deadline, now_ + Seconds(options_.read_timeout_seconds)));
    if (!Advance(c, state)) return;
  }
  again_.push_back(c);  // More may be waiting: after the others have had their turn.
}

// Acts on what the reader says; true while the request still needs bytes.
bool ListenerLoop::Advance(Connection* c, RequestReader::State state) {
  switch (state) {
    case RequestReader::State::kNeedMore:
      if (c->reader.TakeContinue()) {
        Outgoing go{std::string(kContinue), {}, 0};
        // 25 bytes on a socket whose replies were all taken: a client that cannot take them is gone.
        if (go.SendSome(c->socket).status != IoStatus::kOk) {
          Close(c);
          return false;
        }
      }
      return true;
    case RequestReader::State::kComplete: DispatchRequest(c); return false;
    case RequestReader::State::kFailed: Answer(c, c->reader.failure()); return false;
  }
  return false;
}

void ListenerLoop::DispatchRequest(Connection* c) {
  if (stopped_) return Close(c);  // No new requests.
  Unwatch(c);
  c->at_worker = true;
  c->served = true;
  c->claim.store(Connection::kUnclaimed);
  c->work_deadline = now_ + Seconds(options_.request_timeout_seconds);
  SetDeadline(c, c->work_deadline);
  dispatch_(c);
}

void ListenerLoop::Return(Connection* c) {
  {
    std::lock_guard<std::mutex> lock(returned_mu_);
    returned_.push_back(c);
  }
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void ListenerLoop::DrainReturns() {
  uint64_t count;
  (void)!read(wake_fd_, &count, sizeof count);
  std::vector<Connection*> returned;
  {
    std::lock_guard<std::mutex> lock(returned_mu_);
    returned.swap(returned_);
  }
  for (Connection* c : returned) Returned(c);
}

void ListenerLoop::Returned(Connection* c) {
  c->at_worker = false;
  if (c->claim.load() == Connection::kByDeadline) {
    // The 503 went (or is going) from here: the worker's reply is dropped.
    if (c->phase == Connection::Phase::kParked) Close(c);
    return;
  }
  if (c->failed) return Close(c);
  c->phase = Connection::Phase::kWriting;
  SetDeadline(c, now_ + Seconds(options_.write_timeout_seconds));
  if (!c->out.done()) return Watch(c, EPOLLOUT);
  AfterReply(c);
}

void ListenerLoop::AfterReply(Connection* c) {
  if (c->at_worker) return Park(c);
  if (c->close_after || stopped_) return c->linger ? Linger(c) : Close(c);
  c->out = Outgoing();
  c->phase = Connection::Phase::kReading;
  SetDeadline(c, now_ + Seconds(options_.keep_alive_seconds));
  RequestReader::State state = c->reader.Next();
  if (c->reader.started()) SetDeadline(c, now_ + Seconds(options_.read_timeout_seconds));
  if (!Advance(c, state)) return;  // A pipelined request, whole already.
  Watch(c, EPOLLIN);
  if (c->socket.Buffered()) again_.push_back(c);
}

}  // namespace topofit::server
