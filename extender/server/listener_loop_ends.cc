// ListenerLoop, continued: how exchanges end - replies written from the reader thread, writes the
// socket did not take at once, lingering closes, parked and closed connections - and the deadlines
// that end them (listener_loop.h lists them).
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "extender/server/http_wire.h"
#include "extender/server/listener_loop.h"

namespace topofit::server {
namespace {

constexpr auto kLingerTime = std::chrono::seconds(1);

std::chrono::seconds Seconds(int s) { return std::chrono::seconds(std::max(0, s)); }

}  // namespace

// A reply from this thread (a refusal, a timeout, a deadline), then the connection closes.
void ListenerLoop::Answer(Connection* c, const Reply& reply) {
  c->out = Outgoing::Of(ReplyHead(reply, false), reply.body, c->socket.ssl() != nullptr);
  c->close_after = c->linger = true;
  c->phase = Connection::Phase::kWriting;
  SetDeadline(c, now_ + Seconds(options_.write_timeout_seconds));
  Write(c);
}

void ListenerLoop::Write(Connection* c) {
  Io io = c->out.SendSome(c->socket);
  if (io.status == IoStatus::kWouldBlock) return Watch(c, io.wait);
  if (io.status != IoStatus::kOk) return c->at_worker ? Park(c) : Close(c);
  c->last_active = now_;
  AfterReply(c);
}

void ListenerLoop::Linger(Connection* c) {
  c->socket.CloseNotify();
  shutdown(c->socket.fd(), SHUT_WR);
  c->phase = Connection::Phase::kLingering;
  SetDeadline(c, now_ + kLingerTime);
  Drain(c);
}

void ListenerLoop::Drain(Connection* c) {
  for (int round = 0; round < kReadsPerTurn; ++round) {
    ssize_t n = recv(c->socket.fd(), scratch_.get(), kScratchBytes, 0);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Watch(c, EPOLLIN);
    if (n < 0 && errno == EINTR) continue;
    return Close(c);  // EOF or an error: the client has read what it wanted.
  }
  Watch(c, EPOLLIN);
}

// Ended, while a worker still holds its request: nothing more goes either way until Return().
void ListenerLoop::Park(Connection* c) {
  Unwatch(c);
  shutdown(c->socket.fd(), SHUT_RDWR);
  c->phase = Connection::Phase::kParked;
  c->deadline = Clock::time_point::max();
}

void ListenerLoop::Close(Connection* c) {
  Unwatch(c);
  std::erase(again_, c);  // Freed with the graveyard, before the next turn reads again_.
  c->socket.CloseNotify();
  close(c->socket.fd());
  c->dead = true;
  stats_->open--;
  const size_t at = c->index;
  graveyard_.push_back(std::move(conns_[at]));
  if (at + 1 < conns_.size()) {
    conns_[at] = std::move(conns_.back());
    conns_[at]->index = at;
  }
  conns_.pop_back();
}

void ListenerLoop::Expire(Connection* c) {
  using Phase = Connection::Phase;
  if (c->at_worker && c->phase != Phase::kWriting) {
    int unclaimed = Connection::kUnclaimed;
    if (!c->claim.compare_exchange_strong(unclaimed, Connection::kByDeadline)) {
      c->deadline = Clock::time_point::max();  // The worker is sending its reply: it returns soon.
      return;
    }
    stats_->deadline_replies++;
    return Answer(c, JsonErrorReply(503, fmt::format("the request took longer than its deadline of {} s",
                                                     options_.request_timeout_seconds)));
  }
  if (c->phase == Phase::kHandshake) {
    Log(LogLevel::kWarn, "TLS handshake timed out", {{"peer", PeerOf(c->socket.fd())}});
  } else if (c->phase == Phase::kReading && c->reader.started()) {
    stats_->read_timeouts++;
    return Answer(c, JsonErrorReply(408, fmt::format("the request did not arrive within {} s",
                                                     options_.read_timeout_seconds)));
  }
  if (c->at_worker) return Park(c);
  Close(c);
}

void ListenerLoop::Sweep() {
  std::vector<Connection*> expired;
  for (auto& c : conns_)
    if (c->deadline <= now_) expired.push_back(c.get());
  for (Connection* c : expired)
    if (!c->dead) Expire(c);
  next_deadline_ = Clock::time_point::max();
  for (auto& c : conns_) next_deadline_ = std::min(next_deadline_, c->deadline);
}

void ListenerLoop::SetDeadline(Connection* c, Clock::time_point at) {
  c->deadline = at;
  next_deadline_ = std::min(next_deadline_, at);
}

void ListenerLoop::Watch(Connection* c, uint32_t events) {
  if (c->events == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = c;
  epoll_ctl(epoll_fd_, c->events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c->socket.fd(), &ev);
  c->events = events;
}

void ListenerLoop::Unwatch(Connection* c) {
  if (c->events == 0) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->socket.fd(), nullptr);
  c->events = 0;
}

}  // namespace topofit::server
