#pragma once
// HostileTraffic: the hostile clients of issue 24 against one port of `topofit serve`, from one
// epoll thread (so that the load generator's own CPU stays small beside the server's):
//
//   stalled   `stalled` connections that send part of a request head and then nothing
//   slow      `slow` connections that trickle a whole filter request, one byte per `slow_byte_s`
//   garbage   `garbage_per_s` connections a second that send 4 KiB of random bytes and a blank line
//   huge      `huge_per_s` connections a second that send a 64 KiB request head
//   bomb      `bomb_per_s` POSTs a second of a "billion laughs" YAML pod to /api/v1/explain
//   explain   `explain_per_s` POSTs a second of a well-formed GPU pod to /api/v1/explain (every node)
//
// Stalled and slow connections are kept at their count: when the server closes one (its 408 at
// read_timeout, or to make room past max_connections) it is opened again, at most
// `reconnect_per_s` a second in all, so that more connections than the server keeps churn through its
// cap. The others open at their rate, send everything, read until the server closes or 30 s pass,
// and count the status line they got ("400", "431", "503", ...; "closed" when none came).
//
// Contract: Start() once, Stop() once (joins the thread; every connection closes). Counts() is safe
// from any thread. A connect that fails is counted ("connect failed"), never fatal: the server is
// allowed to refuse. Needs descriptors for stalled + slow + a few hundred more (RLIMIT_NOFILE).

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace topofit::bench {

struct HostileMix {
  int stalled = 2000, slow = 500;
  double slow_byte_s = 1;
  double garbage_per_s = 200, huge_per_s = 100, bomb_per_s = 50, explain_per_s = 200;
  double reconnect_per_s = 500;
  // The nice of the epoll thread that plays every hostile client (named "hostile" in /proc): 0 as
  // the other threads here; 19 stands for an attacker whose CPU does not come out of the server's
  // machine share (in a cluster it runs in another pod, mostly on another node). The traffic it is
  // asked for is the same; what it managed to send is in Counts().
  int nice = 0;
};

class HostileTraffic {
 public:
  HostileTraffic(int port, HostileMix mix) : port_(port), mix_(mix) {}
  ~HostileTraffic() { Stop(); }
  HostileTraffic(const HostileTraffic&) = delete;
  HostileTraffic& operator=(const HostileTraffic&) = delete;

  void Start();
  void Stop();
  // "kind answer" -> how many, e.g. "garbage 400", "stalled 408", "explain 503", "bomb closed".
  std::map<std::string, long> Counts() const;
  // Stalled and slow connections open now.
  long open_persistent() const { return open_persistent_.load(); }

 private:
  void Run();
  void Count(const std::string& what);

  const int port_;
  const HostileMix mix_;
  std::atomic<bool> stop_{false};
  std::atomic<long> open_persistent_{0};
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, long> counts_;
  friend class HostileLoop;
};

// The bodies it sends, for tests of the generator itself.
std::string BombYaml();       // 9 levels of 9 aliases: 9^8 strings expanded.
std::string ExplainPodJson(); // One pod asking for 4 GPUs.

}  // namespace topofit::bench
