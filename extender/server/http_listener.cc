#include "extender/server/http_listener.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "base/work_deadline.h"
#include "extender/server/http_wire.h"
#include "extender/server/listener_loop.h"
#include "extender/server/thread_role.h"

namespace topofit::server {
namespace {

// The port a bound socket got (the ephemeral one for port 0).
int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

HttpListener::HttpListener(ListenerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
  // Our own sends pass MSG_NOSIGNAL, but a handler's writes elsewhere (OpenSSL's to the API
  // server) would kill a serving process on a closed peer; cpp-httplib's server did the same.
  std::signal(SIGPIPE, SIG_IGN);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

HttpListener::~HttpListener() {
  Stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

Status HttpListener::Bind() {
  if (stop_fd_ < 0) return Error{"cannot create an eventfd"};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options_.port);
  const char* host = options_.host.empty() ? nullptr : options_.host.c_str();
  if (int rc = getaddrinfo(host, port.c_str(), &hints, &found); rc != 0)
    return Error{fmt::format("cannot resolve {}: {}", options_.host, gai_strerror(rc))};
  std::string last = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    // Non-blocking: a connection reset between epoll and accept4 must not block the reader thread.
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      port_ = BoundPort(fd);
      listen_fd_ = fd;
      break;
    }
    last = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) return Error{fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, last)};
  return Status::Ok();
}

void HttpListener::Run() {
  std::lock_guard<std::mutex> run(run_mu_);
  if (listen_fd_ < 0 || stopping_.load()) return;
  SetThreadRole(options_.thread_name + "-read", 0);
  ListenerLoop loop(options_, std::exchange(listen_fd_, -1), stop_fd_, [this](Connection* c) { Dispatch(c); },
                    &stats_);
  loop_ = &loop;
  StartWorkers();
  loop.Run();  // Until stopped and every connection ended: no worker holds one any more.
  StopWorkers();
  loop_ = nullptr;
}

void HttpListener::StopAccepting() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof one);
}

void HttpListener::Stop() {
  StopAccepting();
  std::lock_guard<std::mutex> run(run_mu_);  // Run() has returned, its workers joined.
}

void HttpListener::StartWorkers() {
  std::lock_guard<std::mutex> lock(mu_);
  exit_ = false;
  for (int i = 0; i < std::max(1, options_.threads); ++i) workers_.emplace_back([this] { Work(false); });
  workers_.emplace_back([this] { Work(true); });
}

void HttpListener::StopWorkers() {
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exit_ = true;
    workers.swap(workers_);
  }
  work_ready_.notify_all();
  probe_ready_.notify_all();
  for (std::thread& t : workers) t.join();
}

// On the reader thread: a complete request, to the probes' queue or the others'.
void HttpListener::Dispatch(Connection* c) {
  const HttpRequest& req = c->reader.request();
  const bool probe = req.method == "GET" &&
                     std::find(options_.probe_paths.begin(), options_.probe_paths.end(), req.path) !=
                         options_.probe_paths.end();
  {
    std::lock_guard<std::mutex> lock(mu_);
    (probe ? probes_ : jobs_).push_back(c);
  }
  work_ready_.notify_one();
  if (probe) probe_ready_.notify_one();
}

// The next request for this worker (probes first); null once the workers are to exit.
Connection* HttpListener::Take(bool probes_only) {
  std::unique_lock<std::mutex> lock(mu_);
  auto& ready = probes_only ? probe_ready_ : work_ready_;
  ready.wait(lock, [&] { return exit_ || !probes_.empty() || (!probes_only && !jobs_.empty()); });
  std::deque<Connection*>& queue = !probes_.empty() || probes_only ? probes_ : jobs_;
  if (queue.empty()) return nullptr;
  Connection* c = queue.front();
  queue.pop_front();
  return c;
}

void HttpListener::Work(bool probes_only) {
  SetThreadRole(options_.thread_name + (probes_only ? "-probe" : "-work"), 0);
  while (Connection* c = Take(probes_only)) {
    Answer(*c);
    loop_->Return(c);
  }
}

// Runs the handler (a 503 once stopping) and sends what the socket takes of the reply; the reader
// thread sends the rest. Nothing is sent when the request's deadline came first.
void HttpListener::Answer(Connection& c) {
  const HttpRequest& req = c.reader.request();
  Reply reply = stopping_.load() ? JsonErrorReply(503, "the server is shutting down") : Call(req, c.work_deadline);
  int unclaimed = Connection::kUnclaimed;
  if (!c.claim.compare_exchange_strong(unclaimed, Connection::kByWorker)) return;
  const bool keep_alive = c.reader.keep_alive() && !stopping_.load();
  c.close_after = c.linger = !keep_alive;
  std::string head = ReplyHead(reply, keep_alive);  // Before the body moves.
  c.out = Outgoing::Of(std::move(head), std::move(reply.body), c.socket.ssl() != nullptr);
  Io io = c.out.SendSome(c.socket);
  c.failed = io.status == IoStatus::kClosed || io.status == IoStatus::kFailed;
}

Reply HttpListener::Call(const HttpRequest& req, std::chrono::steady_clock::time_point deadline) {
  in_flight_.fetch_add(1);
  Reply reply;
  try {
    WorkDeadline work(deadline, &stopping_);
    reply = handler_(req);
  } catch (const std::exception& e) {
    reply = JsonErrorReply(500, fmt::format("internal error: {}", e.what()));
  } catch (...) {
    reply = JsonErrorReply(500, "internal error");
  }
  in_flight_.fetch_sub(1);
  return reply;
}

}  // namespace topofit::server
