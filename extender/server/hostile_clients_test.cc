// HttpListener against clients that do not play along: a thousand stalled connections, partial heads
// and bodies, garbage, huge heads, clients that never read, handlers that overrun their deadline -
// while a well-behaved client's requests all succeed, promptly. The figures these print are in
// docs/hostile-input.md.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/work_deadline.h"
#include "extender/server/http_listener.h"
#include "extender/server/listener_test_util.h"
#include "extender/server/ops_listener.h"

namespace topofit::server {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using testing::RawConn;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

Reply Echo(const HttpRequest& req) {
  Reply r;
  r.content_type = "text/plain";
  r.body = std::string(req.method) + " " + req.path + "|" + std::string(req.body);
  return r;
}

// Up to `want` descriptors for this process (the soft limit raised toward the hard one); returns
// how many connections the test can open, both ends counted, keeping 200 spare.
int RoomForConnections(int want) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  rlim_t target = std::min<rlim_t>(r.rlim_max, static_cast<rlim_t>(2 * want + 400));
  if (r.rlim_cur < target) {
    r.rlim_cur = target;
    setrlimit(RLIMIT_NOFILE, &r);
    getrlimit(RLIMIT_NOFILE, &r);
  }
  return std::min(want, static_cast<int>((r.rlim_cur - 200) / 2));
}

// A well-behaved client: `count` requests on one keep-alive connection and `count` on fresh ones,
// each checked; returns the slowest, or -1 when one failed.
double WellBehaved(int port, int count) {
  double slowest = 0;
  RawConn keep(port);
  for (int i = 0; i < 2 * count; ++i) {
    RawConn fresh(port);
    RawConn& c = i % 2 ? fresh : keep;
    const std::string body = "ok-" + std::to_string(i);
    auto start = Clock::now();
    if (!c.ok() || !c.Send("POST /good HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\n\r\n" + body))
      return -1;
    std::string reply = c.ReadReply(3s);
    if (reply.find("HTTP/1.1 200 OK") != 0 || reply.find("POST /good|" + body) == std::string::npos) return -1;
    slowest = std::max(slowest, Ms(Clock::now() - start));
  }
  return slowest;
}

// The hostile mix, connection i of n: nothing at all, a head cut short, a body cut short, garbage
// ending in a blank line, or a head over the 16 KiB limit.
std::string Hostile(int i, std::mt19937& rng) {
  switch (i % 5) {
    case 0: return "";
    case 1: return "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Le";
    case 2: return "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"Pod\":";
    case 3: {
      std::string junk(64 + rng() % 512, '\0');
      for (char& ch : junk) ch = static_cast<char>(rng());
      return junk + "\r\n\r\n";  // Parsed (and refused) once its head looks complete.
    }
    default: return "GET / HTTP/1.1\r\nX-Big: " + std::string(20000, 'h') + "\r\n\r\n";
  }
}

}  // namespace

TEST_CASE("hostile clients: 1,000 stalled, partial, garbage and huge-header connections, and every good request succeeds") {
  const int n = RoomForConnections(1000);
  MESSAGE("hostile connections: ", n);
  ListenerOptions o;
  o.read_timeout_seconds = 30;  // Longer than the test: they stay open unless refused outright.
  testing::RunningListener s(o, Echo);
  const int port = s.listener.port();
  std::mt19937 rng(24);
  std::vector<RawConn> hostile;
  hostile.reserve(n);
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    hostile.emplace_back(port);
    REQUIRE(hostile.back().ok());
    hostile.back().Send(Hostile(i, rng));  // Garbage and huge heads may see the server close first.
  }
  MESSAGE("opened ", n, " hostile connections in ", Ms(Clock::now() - start), " ms");
  double slowest = WellBehaved(port, 50);
  MESSAGE("slowest of 100 good requests among them: ", slowest, " ms");
  CHECK(slowest >= 0);
  CHECK(slowest < 1000);
  // Each kind got what it deserves: garbage a 400, huge heads a 431; the stalled ones nothing yet.
  CHECK(hostile[3].ReadReply(2s).find("HTTP/1.1 400 Bad Request") == 0);
  CHECK(hostile[4].ReadReply(2s).find("HTTP/1.1 431 Request Header Fields Too Large") == 0);
  for (int i : {0, 1, 2}) {
    pollfd p{hostile[i].fd, POLLIN, 0};
    CHECK(poll(&p, 1, 0) == 0);
  }
  CHECK(s.listener.stats().open.load() >= n * 3 / 5);  // The stalled ones, still held - by no worker.
  CHECK(s.listener.in_flight() == 0);
}

TEST_CASE("hostile clients: past max_connections the least recently active go first, the good client stays served") {
  ListenerOptions o;
  o.max_connections = 64;
  testing::RunningListener s(o, Echo);
  std::vector<RawConn> stalled;
  for (int i = 0; i < 200; ++i) {
    stalled.emplace_back(s.listener.port());
    REQUIRE(stalled.back().ok());
    stalled.back().Send("GET /slow");
  }
  CHECK(WellBehaved(s.listener.port(), 20) >= 0);
  CHECK(s.listener.stats().evicted.load() >= 200 - 64);
  CHECK(s.listener.stats().open.load() <= 64);
  CHECK(stalled.front().ClosedWithin(2s));  // The oldest went first.
}

TEST_CASE("hostile clients: past max_connections a served keep-alive connection outlives newer stalled ones") {
  ListenerOptions o;
  o.max_connections = 16;
  testing::RunningListener s(o, Echo);
  RawConn keep(s.listener.port());  // kube-scheduler's: one request, then idle between pods.
  REQUIRE(keep.Send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(keep.ReadReply(2s).find("HTTP/1.1 200") == 0);
  std::vector<RawConn> stalled;  // Newer, so more recently active than `keep`, but never a whole request.
  for (int i = 0; i < 100; ++i) {
    stalled.emplace_back(s.listener.port());
    REQUIRE(stalled.back().ok());
    stalled.back().Send("GET /slow");
  }
  std::this_thread::sleep_for(200ms);  // The reader thread takes them all in.
  CHECK(s.listener.stats().evicted.load() >= 100 - 16);
  REQUIRE(keep.Send("GET /second HTTP/1.1\r\nHost: x\r\n\r\n"));
  bool closed = false;
  std::string second = keep.ReadReply(2s, &closed);
  CHECK_FALSE(closed);
  CHECK(second.find("HTTP/1.1 200") == 0);  // The same connection, still open.
}

TEST_CASE("hostile clients: a request that does not arrive in time gets a 408 and the connection closes") {
  ListenerOptions o;
  o.read_timeout_seconds = 1;
  testing::RunningListener s(o, Echo);
  RawConn partial(s.listener.port());
  RawConn trickle(s.listener.port());
  auto start = Clock::now();
  partial.Send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345");
  // A byte every 200 ms keeps it busy but not done: the bound is on the whole request.
  std::thread t([&] {
    for (std::string_view part : {"GET ", "/a ", "HTTP", "/1.1", "\r\n", "X: y", "\r\n"}) {
      if (!trickle.Send(part)) return;
      std::this_thread::sleep_for(200ms);
    }
  });
  std::string reply = partial.ReadReply(5s);
  const double waited = Ms(Clock::now() - start);
  MESSAGE("408 after ", waited, " ms");
  CHECK(reply.find("HTTP/1.1 408 Request Timeout") == 0);
  CHECK(reply.find("did not arrive within 1 s") != std::string::npos);
  CHECK(waited > 900);
  CHECK(waited < 3000);
  CHECK(trickle.ReadReply(3s).find("HTTP/1.1 408") == 0);
  t.join();
  CHECK(partial.ClosedWithin(3s));
  CHECK(s.listener.stats().read_timeouts.load() == 2);
}

TEST_CASE("hostile clients: a handler past its deadline - the client gets a 503 at the deadline, the work is told to stop") {
  ListenerOptions o;
  o.request_timeout_seconds = 1;
  std::atomic<bool> told{false};
  testing::RunningListener s(o, [&](const HttpRequest& req) {
    if (req.path != "/long") return Echo(req);
    std::this_thread::sleep_for(1500ms);  // Work that does not look at its deadline in time.
    told = WorkDeadline::Expired() == WorkDeadline::kPassed;
    return Echo(req);
  });
  RawConn c(s.listener.port());
  auto start = Clock::now();
  c.Send("GET /long HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string reply = c.ReadReply(5s);
  const double waited = Ms(Clock::now() - start);
  MESSAGE("503 after ", waited, " ms");
  CHECK(reply.find("HTTP/1.1 503 Service Unavailable") == 0);
  CHECK(reply.find("longer than its deadline of 1 s") != std::string::npos);
  CHECK(waited < 2500);
  CHECK(c.ClosedWithin(3s));
  for (int i = 0; i < 300 && !told.load(); ++i) std::this_thread::sleep_for(10ms);
  CHECK(told.load());
  CHECK(s.listener.stats().deadline_replies.load() == 1);
  CHECK(WellBehaved(s.listener.port(), 5) >= 0);
}

TEST_CASE("hostile clients: with every worker busy, /healthz and /readyz still answer") {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> blocked{0};
  testing::RunningListener s(ListenerOptions{}, [&](const HttpRequest& req) {
    if (req.path == "/block") {
      blocked++;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, 10s, [&] { return release; });
    }
    return Echo(req);
  });
  std::vector<RawConn> busy;
  for (int i = 0; i < 8; ++i) {  // Twice the 4 workers: 4 run, 4 wait.
    busy.emplace_back(s.listener.port());
    busy.back().Send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  for (int i = 0; i < 500 && blocked.load() < 4; ++i) std::this_thread::sleep_for(5ms);
  REQUIRE(blocked.load() == 4);
  for (const char* probe : {"/healthz", "/readyz"}) {
    RawConn c(s.listener.port());
    auto start = Clock::now();
    c.Send(std::string("GET ") + probe + " HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(c.ReadReply(2s).find("HTTP/1.1 200 OK") == 0);
    MESSAGE(std::string(probe), " with every worker busy: ", Ms(Clock::now() - start), " ms");
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (RawConn& c : busy) CHECK(c.ReadReply(5s).find("HTTP/1.1 200 OK") == 0);
}

TEST_CASE("hostile clients: a client that never reads its reply holds no worker and is closed after write_timeout") {
  ListenerOptions o;
  o.write_timeout_seconds = 2;
  std::atomic<int> huge{0};
  testing::RunningListener s(o, [&](const HttpRequest& req) {
    Reply r = Echo(req);
    if (req.path == "/huge") {
      r.body.assign(16 << 20, 'z');
      huge++;
    }
    return r;
  });
  std::vector<RawConn> deaf;
  for (int i = 0; i < 6; ++i) {  // More than the 4 workers.
    deaf.emplace_back(s.listener.port());
    int small = 4096;
    setsockopt(deaf.back().fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    deaf.back().Send("GET /huge HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  // Every handler returns although no reply has been read: the rest of each waits on the reader
  // thread, not on a worker.
  for (int i = 0; i < 500 && (huge.load() < 6 || s.listener.in_flight() > 0); ++i) std::this_thread::sleep_for(10ms);
  CHECK(huge.load() == 6);
  CHECK(s.listener.in_flight() == 0);
  CHECK(s.listener.stats().open.load() == 6);
  CHECK(WellBehaved(s.listener.port(), 5) >= 0);
  auto start = Clock::now();
  for (int i = 0; i < 500 && s.listener.stats().open.load() > 0; ++i) std::this_thread::sleep_for(10ms);
  MESSAGE("deaf clients closed ", Ms(Clock::now() - start), " ms after the good requests");
  CHECK(s.listener.stats().open.load() == 0);
}

TEST_CASE("hostile clients: request bodies past the listener's memory budget get a 503 with Retry-After") {
  ListenerOptions o;
  o.max_body_bytes = 600 << 10;
  o.max_buffered_bytes = 1 << 20;
  testing::RunningListener s(o, Echo);
  RawConn first(s.listener.port());
  first.Send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 600000\r\n\r\npart");  // Held: 600 KB.
  std::this_thread::sleep_for(100ms);
  RawConn second(s.listener.port());
  second.Send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 600000\r\n\r\npart");
  std::string reply = second.ReadReply(2s);
  CHECK(reply.find("HTTP/1.1 503 Service Unavailable") == 0);
  CHECK(reply.find("Retry-After: 1\r\n") != std::string::npos);
  CHECK(first.Send(std::string(600000 - 4, 'x')));
  CHECK(first.ReadReply(3s).find("HTTP/1.1 200 OK") == 0);
  CHECK(WellBehaved(s.listener.port(), 3) >= 0);  // Small bodies still fit the rest of the budget.
}

TEST_CASE("hostile clients: StopAccepting tells running handlers to stop, and Stop returns promptly") {
  std::atomic<bool> cancelled{false};
  std::atomic<bool> running{false};
  auto s = std::make_unique<testing::RunningListener>(ListenerOptions{}, [&](const HttpRequest& req) {
    running = true;
    auto until = Clock::now() + 10s;
    while (WorkDeadline::Expired().empty() && Clock::now() < until) std::this_thread::sleep_for(1ms);
    cancelled = WorkDeadline::Expired() == WorkDeadline::kCancelled;
    return Echo(req);
  });
  RawConn c(s->listener.port());
  RawConn idle(s->listener.port());
  c.Send("GET /work HTTP/1.1\r\nHost: x\r\n\r\n");
  idle.Send("GET /wo");
  for (int i = 0; i < 500 && !running.load(); ++i) std::this_thread::sleep_for(5ms);
  REQUIRE(running.load());
  auto start = Clock::now();
  s.reset();  // Stop(): StopAccepting, then wait for everything to end.
  MESSAGE("Stop with a running handler and a partial request: ", Ms(Clock::now() - start), " ms");
  CHECK(Clock::now() - start < 2s);
  CHECK(cancelled.load());
  std::string reply = c.ReadReply(1s);
  CHECK(reply.find("HTTP/1.1 200 OK") == 0);  // Its reply still went.
  CHECK(reply.find("Connection: close") != std::string::npos);
  CHECK(idle.ClosedWithin(1s));
}

}  // namespace topofit::server

namespace topofit::server {

// `topofit node`'s /healthz, /readyz and /metrics (OpsListener) ride on the same HttpListener: 200
// stalled connections on its port - what kept serve's /healthz silent for 35 s - leave them answering.
TEST_CASE("hostile clients: OpsListener (topofit node's probes) answers /healthz past 200 stalled connections") {
  OpsListener ops(OpsHandlers{[] { return OpsProbe{true, "ok\n"}; }, [] { return OpsProbe{true, "ok\n"}; },
                              [] { return std::string("# metrics\n"); }});
  REQUIRE(ops.Start("127.0.0.1:0").ok());
  std::vector<RawConn> stalled;
  for (int i = 0; i < 200; ++i) {
    stalled.emplace_back(ops.port());
    REQUIRE(stalled.back().ok());
    stalled.back().Send(i % 2 ? "GET /healthz HTTP/1.1\r\nHo" : "");
  }
  double slowest = 0;
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    RawConn c(ops.port());
    auto start = Clock::now();
    c.Send(std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(c.ReadReply(2s).find("HTTP/1.1 200 OK") == 0);
    slowest = std::max(slowest, Ms(Clock::now() - start));
  }
  MESSAGE("ops port past 200 stalled connections: slowest probe ", slowest, " ms");
  CHECK(slowest < 1000);
}

}  // namespace topofit::server
