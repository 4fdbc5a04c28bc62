#include "bench/loadgen/hostile_traffic.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>
#include <unordered_map>
#include <vector>

namespace topofit::bench {
namespace {

using Clock = std::chrono::steady_clock;

enum Kind { kStalled, kSlow, kGarbage, kHuge, kBomb, kExplain, kKinds };
const char* kKindNames[kKinds] = {"stalled", "slow", "garbage", "huge head", "bomb", "explain"};

std::string Post(const std::string& path, const std::string& type, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: hostile\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string Garbage(std::mt19937& rng) {
  std::string s(4096, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s + "\r\n\r\n";
}

std::string HugeHead() {
  std::string head = "GET /healthz HTTP/1.1\r\nHost: hostile\r\n";
  for (int i = 0; head.size() < (64u << 10); ++i) head += "X-Pad-" + std::to_string(i) + ": " + std::string(200, 'a') + "\r\n";
  return head + "\r\n";
}

struct Conn {
  Kind kind;
  std::string out;
  size_t sent = 0;
  bool connected = false;
  std::string in;  // The reply's first bytes, up to its status line.
  Clock::time_point give_up, next_byte;
};

}  // namespace

std::string BombYaml() {
  std::string bomb = "metadata: {name: lol, namespace: ml}\nl0: &a0 [lol]\n";
  for (int i = 1; i <= 8; ++i) {
    bomb += "l" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) bomb += (j ? ",*a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  return bomb;
}

std::string ExplainPodJson() {
  return R"({"metadata":{"name":"curious","namespace":"ml","uid":"u-curious"},"spec":{"containers":[{"name":"c",)"
         R"("resources":{"limits":{"nvidia.com/gpu":"4"}}}]}})";
}

// The epoll loop of one HostileTraffic run.
class HostileLoop {
 public:
  explicit HostileLoop(HostileTraffic& t) : t_(t), ep_(epoll_create1(EPOLL_CLOEXEC)) {
    payload_[kStalled] = "POST /scheduler/filter HTTP/1.1\r\nHost: hostile\r\nContent-Le";
    payload_[kSlow] = Post("/scheduler/filter", "application/json", R"({"Pod":{"metadata":{"name":"slow"}},"NodeNames":[]})");
    payload_[kHuge] = HugeHead();
    payload_[kBomb] = Post("/api/v1/explain", "application/yaml", BombYaml());
    payload_[kExplain] = Post("/api/v1/explain", "application/json", ExplainPodJson());
  }
  ~HostileLoop() {
    for (auto& [fd, c] : conns_) close(fd);
    close(ep_);
  }

  void Run() {
    for (int i = 0; i < t_.mix_.stalled; ++i) reopen_.push_back(kStalled);
    for (int i = 0; i < t_.mix_.slow; ++i) reopen_.push_back(kSlow);
    last_ = Clock::now();
    epoll_event events[256];
    while (!t_.stop_.load()) {
      int n = epoll_wait(ep_, events, 256, 10);
      for (int i = 0; i < n; ++i) Event(events[i].data.fd, events[i].events);
      Tick();
    }
  }

 private:
  // Opens what is due: reopened persistent connections, then the rate-driven kinds.
  void Tick() {
    auto now = Clock::now();
    double dt = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    const HostileMix& m = t_.mix_;
    const double rates[kKinds] = {0, 0, m.garbage_per_s, m.huge_per_s, m.bomb_per_s, m.explain_per_s};
    reconnect_credit_ = std::min(reconnect_credit_ + dt * m.reconnect_per_s, std::max(1.0, m.reconnect_per_s / 10));
    while (!reopen_.empty() && (reconnect_credit_ >= 1 || opened_initial_ < m.stalled + m.slow)) {
      if (opened_initial_ >= m.stalled + m.slow) reconnect_credit_ -= 1;
      ++opened_initial_;
      Open(reopen_.back(), now);
      reopen_.pop_back();
    }
    for (int k = kGarbage; k < kKinds; ++k) {
      credit_[k] = std::min(credit_[k] + dt * rates[k], std::max(1.0, rates[k] / 10));
      for (; credit_[k] >= 1; credit_[k] -= 1) Open(Kind(k), now);
    }
    if (now - last_sweep_ > std::chrono::milliseconds(100)) Sweep(now);
  }

  void Open(Kind kind, Clock::time_point now) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(t_.port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS)) {
      if (fd >= 0) close(fd);
      Finish(kind, "connect failed");
      return;
    }
    Conn& c = conns_[fd];
    c.kind = kind;
    c.out = kind == kGarbage ? Garbage(rng_) : payload_[kind];
    c.give_up = now + std::chrono::seconds(30);
    c.next_byte = now;
    if (kind == kStalled || kind == kSlow) t_.open_persistent_.fetch_add(1);
    epoll_event ev{EPOLLIN | EPOLLOUT | EPOLLRDHUP, {}};
    ev.data.fd = fd;
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
  }

  void Event(int fd, uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if ((events & EPOLLOUT) && !c.connected) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) return End(fd, "connect failed");
      c.connected = true;
      epoll_event ev{EPOLLIN | EPOLLRDHUP | (c.kind == kSlow ? 0u : EPOLLOUT), {}};
      ev.data.fd = fd;
      epoll_ctl(ep_, EPOLL_CTL_MOD, fd, &ev);
    }
    if ((events & EPOLLOUT) && c.kind != kSlow && !Write(fd, c, c.out.size())) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) Read(fd, c);
  }

  // Sends up to `upto` bytes of c.out; false when the connection ended (a write error).
  bool Write(int fd, Conn& c, size_t upto) {
    while (c.sent < std::min(upto, c.out.size())) {
      ssize_t n = send(fd, c.out.data() + c.sent, std::min(upto, c.out.size()) - c.sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n <= 0) {
        Read(fd, c);  // What the server said before it closed, if anything.
        if (conns_.count(fd)) End(fd, "closed");
        return false;
      }
      c.sent += static_cast<size_t>(n);
    }
    if (c.sent == c.out.size()) {
      epoll_event ev{EPOLLIN | EPOLLRDHUP, {}};
      ev.data.fd = fd;
      epoll_ctl(ep_, EPOLL_CTL_MOD, fd, &ev);
    }
    return true;
  }

  // Reads what arrived; ends the connection at its status line (its answer), or when the server closed.
  void Read(int fd, Conn& c) {
    char buf[16384];
    for (;;) {
      ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return End(fd, "closed");
      if (c.in.size() < 64) c.in.append(buf, static_cast<size_t>(std::min<ssize_t>(n, 64)));
      if (c.in.size() >= 12 && c.in.compare(0, 9, "HTTP/1.1 ") == 0) return End(fd, c.in.substr(9, 3));
      if (c.in.size() >= 12) return End(fd, "not HTTP");
    }
  }

  void End(int fd, const std::string& answer) {
    Kind kind = conns_[fd].kind;
    conns_.erase(fd);
    close(fd);
    Finish(kind, answer);
  }

  void Finish(Kind kind, const std::string& answer) {
    if (kind == kStalled || kind == kSlow) {
      reopen_.push_back(kind);
      if (answer != "connect failed") t_.open_persistent_.fetch_sub(1);
    }
    t_.Count(std::string(kKindNames[kind]) + " " + answer);
  }

  // Trickles the slow connections' next bytes; gives up on connections past 30 s (not persistent ones).
  void Sweep(Clock::time_point now) {
    last_sweep_ = now;
    std::vector<int> late;
    auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t_.mix_.slow_byte_s));
    for (auto& [fd, c] : conns_) {
      if (c.kind == kSlow && c.connected && now >= c.next_byte) {
        c.next_byte = now + step;
        if (c.sent < c.out.size() && send(fd, c.out.data() + c.sent, 1, MSG_NOSIGNAL) == 1) ++c.sent;
      }
      if (c.kind != kStalled && c.kind != kSlow && now > c.give_up) late.push_back(fd);
    }
    for (int fd : late) End(fd, "no answer in 30 s");
  }

  HostileTraffic& t_;
  const int ep_;
  std::string payload_[kKinds];
  std::unordered_map<int, Conn> conns_;
  std::vector<Kind> reopen_;
  int opened_initial_ = 0;
  double reconnect_credit_ = 0, credit_[kKinds] = {};
  Clock::time_point last_, last_sweep_;
  std::mt19937 rng_{24};
};

void HostileTraffic::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "hostile");
    if (mix_.nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), mix_.nice);
    HostileLoop(*this).Run();
  });
}

void HostileTraffic::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::map<std::string, long> HostileTraffic::Counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void HostileTraffic::Count(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[what];
}

}  // namespace topofit::bench
