#include "extender/server/http_listener.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>

#include "base/json_writer.h"
#include "base/log.h"

namespace topofit::server {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr size_t kHeaderLimit = 16 << 10;
// A worker keeps its body buffer for the next request up to this size.
constexpr size_t kKeepBodyBytes = 16 << 20;
// Over TLS, a reply up to this size is copied into one buffer so it leaves in one record.
constexpr size_t kTlsJoinBytes = 64 << 10;

enum class Wait { kReady, kTimeout, kStopped, kError };

// Waits until fd is ready for `events` or the deadline passes; with stop_fd >= 0 also until that
// eventfd turns readable (the listener is stopping).
Wait WaitFor(int fd, short events, Clock::time_point deadline, int stop_fd) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Wait::kTimeout;
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    int n = poll(fds, stop_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Wait::kError;
    }
    if (n == 0) continue;  // Re-check the deadline.
    if (stop_fd >= 0 && fds[1].revents) return Wait::kStopped;
    return Wait::kReady;  // POLLERR/POLLHUP too: the next recv or send reports them.
  }
}

// A connected, non-blocking socket as Beast's SyncReadStream: a read takes what is there and waits
// in poll only when nothing is, as Go's net/http does; every read shares one deadline.
// With an SSL object it reads and writes through TLS on that socket instead.
class Socket {
 public:
  Socket(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  void set_deadline(Clock::time_point d) { deadline_ = d; }
  // Decrypted bytes wait inside the TLS layer: the socket may not turn readable for them.
  bool Buffered() const { return ssl_ && SSL_pending(ssl_) > 0; }
  // Over TLS, unless the connection failed: tells the client it ends (a close_notify), without
  // waiting for its own.
  void CloseNotify() {
    if (!ssl_ || broken_) return;
    SSL_shutdown(ssl_);
    ERR_clear_error();
  }

  size_t Recv(void* data, size_t size, beast::error_code& ec) {
    if (ssl_) return TlsRecv(data, size, ec);
    for (;;) {
      ssize_t n = recv(fd_, data, size, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n == 0) {
        ec = asio::error::eof;
        return 0;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        ec = beast::error_code(errno, boost::system::system_category());
        return 0;
      }
      if (WaitFor(fd_, POLLIN, deadline_, -1) != Wait::kReady) {
        ec = beast::error::timeout;
        return 0;
      }
    }
  }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers); ++it) {
      asio::mutable_buffer b = *it;
      if (b.size() > 0) return Recv(b.data(), b.size(), ec);
    }
    return 0;
  }
  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    beast::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Sends every byte of the pieces in one sendmsg when the socket takes them. False on error or
  // when the deadline passes.
  bool SendAll(std::initializer_list<std::string_view> pieces, Clock::time_point deadline) {
    if (ssl_) return TlsSendAll(pieces, deadline);
    iovec iov[4];
    int count = 0;
    for (std::string_view p : pieces)
      if (!p.empty() && count < 4) iov[count++] = {const_cast<char*>(p.data()), p.size()};
    iovec* at = iov;
    while (count > 0) {
      msghdr msg{};
      msg.msg_iov = at;
      msg.msg_iovlen = static_cast<size_t>(count);
      ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && WaitFor(fd_, POLLOUT, deadline, -1) == Wait::kReady) continue;
        return false;
      }
      size_t sent = static_cast<size_t>(n);
      for (; count > 0 && sent >= at->iov_len; ++at, --count) sent -= at->iov_len;
      if (count > 0) {
        at->iov_base = static_cast<char*>(at->iov_base) + sent;
        at->iov_len -= sent;
      }
    }
    return true;
  }

 private:
  // Waits for what OpenSSL asked for after a call returned `rc`; false (and ec set) when the
  // connection is done: closed, failed or past the deadline.
  bool TlsWait(int rc, Clock::time_point deadline, beast::error_code& ec) {
    int err = SSL_get_error(ssl_, rc);
    ERR_clear_error();
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0) {
      // Closed (close_notify or a bare EOF), reset, or a TLS error: the connection is unusable.
      broken_ = err != SSL_ERROR_ZERO_RETURN;
      ec = asio::error::eof;
      return false;
    }
    if (WaitFor(fd_, events, deadline, -1) != Wait::kReady) {
      ec = beast::error::timeout;
      return false;
    }
    return true;
  }

  size_t TlsRecv(void* data, size_t size, beast::error_code& ec) {
    for (;;) {
      size_t n = 0;
      int rc = SSL_read_ex(ssl_, data, size, &n);
      if (rc == 1) return n;
      if (!TlsWait(rc, deadline_, ec)) return 0;
    }
  }

  bool TlsWrite(std::string_view p, Clock::time_point deadline) {
    while (!p.empty()) {
      size_t n = 0;
      int rc = SSL_write_ex(ssl_, p.data(), p.size(), &n);
      if (rc == 1) {
        p.remove_prefix(n);
        continue;
      }
      beast::error_code ec;
      if (!TlsWait(rc, deadline, ec)) return false;
    }
    return true;
  }

  // A small reply leaves as one TLS record: head and body are joined first.
  bool TlsSendAll(std::initializer_list<std::string_view> pieces, Clock::time_point deadline) {
    size_t total = 0;
    for (std::string_view p : pieces) total += p.size();
    if (total <= kTlsJoinBytes) {
      std::string joined;
      joined.reserve(total);
      for (std::string_view p : pieces) joined += p;
      return TlsWrite(joined, deadline);
    }
    for (std::string_view p : pieces)
      if (!TlsWrite(p, deadline)) return false;
    return true;
  }

  int fd_;
  SSL* ssl_;
  bool broken_ = false;
  Clock::time_point deadline_;
};

struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
using SslPtr = std::unique_ptr<SSL, SslFree>;

std::string PeerOf(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    return fmt::format("[{}]:{}", host, ntohs(a->sin6_port));
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&addr);
  inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
  return fmt::format("{}:{}", host, ntohs(a->sin_port));
}

// The server side of a TLS handshake on a connected non-blocking socket; null when it failed, the
// deadline passed or the listener is stopping (the caller closes the socket).
SslPtr Handshake(int fd, SSL_CTX* ctx, Clock::time_point deadline, int stop_fd) {
  SslPtr ssl(SSL_new(ctx));
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1) {
    ERR_clear_error();
    return nullptr;
  }
  for (;;) {
    ERR_clear_error();
    int rc = SSL_accept(ssl.get());
    if (rc == 1) return ssl;
    int err = SSL_get_error(ssl.get(), rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      Wait w = WaitFor(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, stop_fd);
      if (w == Wait::kReady) continue;
      if (w == Wait::kTimeout) Log(LogLevel::kWarn, "TLS handshake timed out", {{"peer", PeerOf(fd)}});
      return nullptr;
    }
    unsigned long e = ERR_peek_error();
    if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST) {
      static constexpr std::string_view kPlain =
          "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 48\r\n"
          "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
      Socket plain(fd, nullptr);
      if (plain.SendAll({kPlain}, deadline)) {
        // The rest of the request is unread: drop it for a moment so the close does not reset the
        // connection before the client has read the reply.
        shutdown(fd, SHUT_WR);
        char sink[4096];
        beast::error_code ec;
        plain.set_deadline(std::min(deadline, Clock::now() + std::chrono::seconds(1)));
        while (!ec) plain.Recv(sink, sizeof sink, ec);
      }
    } else if (e != 0) {
      char reason[256];
      ERR_error_string_n(e, reason, sizeof reason);
      Log(LogLevel::kWarn, "TLS handshake failed", {{"peer", PeerOf(fd)}, {"error", reason}});
    } else if (SSL_get_state(ssl.get()) != TLS_ST_BEFORE) {
      // A peer gone mid-handshake (after its first bytes), with nothing in OpenSSL's queue.
      Log(LogLevel::kWarn, "TLS handshake failed", {{"peer", PeerOf(fd)}, {"error", "connection closed by the peer"}});
    }
    ERR_clear_error();
    return nullptr;
  }
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 300 ? "OK" : status < 500 ? "Client Error" : "Server Error";
  }
}

bool SendReply(Socket& s, const Reply& r, bool keep_alive, Clock::time_point deadline) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}{}\r\n", r.status,
                                 ReasonPhrase(r.status), r.content_type, r.body.size(), r.extra_headers,
                                 keep_alive ? "" : "Connection: close\r\n");
  return s.SendAll({head, r.body}, deadline);
}

// A body buffer per worker, grown without zero-filling (a full-node body is megabytes).
struct BodyBuffer {
  std::unique_ptr<char[]> data;
  size_t capacity = 0;
  // Room for n bytes followed by HttpRequest::kBodyPadding zero bytes.
  char* Get(size_t n) {
    const size_t want = n + HttpRequest::kBodyPadding;
    if (want > capacity) {
      data = std::make_unique_for_overwrite<char[]>(want);
      capacity = want;
    }
    std::memset(data.get() + n, 0, HttpRequest::kBodyPadding);
    return data.get();
  }
  void Trim() {
    if (capacity > kKeepBodyBytes) data.reset(), capacity = 0;
  }
};

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string HttpListener::PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string HttpRequest::QueryParam(std::string_view key) const {
  std::string_view q = query;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    size_t eq = pair.find('=');
    if (HttpListener::PercentDecode(pair.substr(0, eq), true) != key) continue;
    return eq == std::string_view::npos ? std::string() : HttpListener::PercentDecode(pair.substr(eq + 1), true);
  }
  return {};
}

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
    // Non-blocking: a connection reset between poll and accept4 must not block the accept loop.
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
      port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < std::max(1, options_.threads); ++i) workers_.emplace_back([this] { Work(); });
  }
  // With TLS the loop wakes at least once per reload interval to look at the files.
  int timeout_ms = -1;
  if (options_.tls) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options_.tls->reload_interval()).count();
    timeout_ms = static_cast<int>(std::clamp<long long>(ms, 10, 60'000));
  }
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int ready = poll(fds, 2, timeout_ms);
    if (options_.tls) options_.tls->Refresh();
    if (ready <= 0) continue;  // EINTR, or the reload interval passed.
    if (fds[1].revents) break;
    int c = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
      // Out of descriptors: back off instead of spinning on a connection we cannot take.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    // Without it keep-alive replies stall ~40 ms on delayed ACKs.
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(c);
    queued_.notify_one();
  }
  // Refuse new connections at once (the kernel resets those still in the backlog).
  close(listen_fd_);
  listen_fd_ = -1;
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
    queued_.notify_all();
  }
  for (std::thread& t : workers) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : queue_) close(fd);
  queue_.clear();
}

void HttpListener::StopAccepting() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof one);
  std::lock_guard<std::mutex> lock(mu_);
  queued_.notify_all();
}

void HttpListener::Stop() {
  StopAccepting();
  {
    // Requests still arriving on open connections end now (a handler already running still
    // sends its reply).
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : active_) shutdown(fd, SHUT_RD);
  }
  std::lock_guard<std::mutex> run(run_mu_);  // Run() has returned, its workers joined.
}

void HttpListener::Work() {
  for (;;) {
    int fd;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queued_.wait(lock, [this] { return stopping_.load() || !queue_.empty(); });
      if (stopping_.load()) return;
      fd = queue_.front();
      queue_.pop_front();
      active_.push_back(fd);
    }
    Serve(fd);
    std::lock_guard<std::mutex> lock(mu_);
    active_.erase(std::find(active_.begin(), active_.end(), fd));
    close(fd);  // Under mu_: Stop() never shuts down a reused descriptor.
  }
}

void HttpListener::Serve(int fd) {
  thread_local BodyBuffer body_buffer;
  SslPtr ssl;
  if (options_.tls) {
    Clock::time_point deadline = Clock::now() + std::chrono::seconds(options_.read_timeout_seconds);
    ssl = Handshake(fd, options_.tls->Context().get(), deadline, stop_fd_);
    if (!ssl) return;
  }
  Socket socket(fd, ssl.get());
  struct Goodbye {
    Socket& s;
    ~Goodbye() { s.CloseNotify(); }
  } goodbye{socket};
  beast::flat_buffer buffer;
  for (;;) {
    // Between requests: wait for the next one, or for the listener to stop.
    if (buffer.size() == 0 && !socket.Buffered()) {
      Clock::time_point idle = Clock::now() + std::chrono::seconds(options_.keep_alive_seconds);
      if (WaitFor(fd, POLLIN, idle, stop_fd_) != Wait::kReady) return;
    }
    if (stopping_.load()) return;
    Clock::time_point deadline = Clock::now() + std::chrono::seconds(options_.read_timeout_seconds);
    socket.set_deadline(deadline);
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    beast::error_code ec;
    http::read_header(socket, buffer, parser, ec);
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout) return;
    Clock::time_point write_deadline = Clock::now() + std::chrono::seconds(options_.write_timeout_seconds);
    if (ec) {
      int status = ec == http::error::header_limit ? 431 : 400;
      SendReply(socket, JsonErrorReply(status, fmt::format("malformed HTTP request: {}", ec.message())), false, write_deadline);
      return;
    }
    auto& msg = parser.get();
    HttpRequest req;
    req.method = View(msg.method_string());
    std::string_view target = View(msg.target());
    size_t q = target.find('?');
    req.path = PercentDecode(target.substr(0, q), false);
    if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
    bool chunked = parser.chunked();
    if (auto length = parser.content_length()) req.content_length = *length;
    req.too_large = req.content_length > options_.max_body_bytes;
    if (!req.too_large && msg.version() >= 11 && beast::iequals(msg[http::field::expect], "100-continue") &&
        !socket.SendAll({"HTTP/1.1 100 Continue\r\n\r\n"}, write_deadline))
      return;
    if (req.too_large) {
      // Not read.
    } else if (chunked) {
      parser.body_limit(options_.max_body_bytes);
      http::read(socket, buffer, parser, ec);
      if (ec == http::error::body_limit) {
        req.too_large = true;
      } else if (ec) {
        if (ec != beast::error::timeout && ec != asio::error::eof)
          SendReply(socket, JsonErrorReply(400, fmt::format("malformed HTTP body: {}", ec.message())), false, write_deadline);
        return;
      } else {
        req.body = msg.body();
      }
    } else if (req.content_length > 0) {
      // Straight into one buffer: what the head's read already took, then the rest in large reads.
      size_t length = static_cast<size_t>(req.content_length);
      char* at = body_buffer.Get(length);
      size_t have = std::min(length, buffer.size());
      if (have > 0) std::memcpy(at, buffer.data().data(), have);
      buffer.consume(have);
      while (have < length) {
        size_t n = socket.Recv(at + have, length - have, ec);
        if (ec) return;  // Timeout or the client went away mid-body: nobody to answer.
        have += n;
      }
      req.body = std::string_view(at, length);
      req.padded = true;
    }
    bool keep_alive = msg.keep_alive() && !req.too_large;
    Reply reply;
    in_flight_.fetch_add(1);
    try {
      reply = handler_(req);
    } catch (const std::exception& e) {
      reply = JsonErrorReply(500, fmt::format("internal error: {}", e.what()));
    } catch (...) {
      reply = JsonErrorReply(500, "internal error");
    }
    in_flight_.fetch_sub(1);
    keep_alive = keep_alive && !stopping_.load();
    write_deadline = Clock::now() + std::chrono::seconds(options_.write_timeout_seconds);
    bool sent = SendReply(socket, reply, keep_alive, write_deadline);
    body_buffer.Trim();
    if (!sent || !keep_alive) {
      if (sent && req.too_large) {
        // The client may still be sending the body we refused: read and drop it for a moment so
        // our close does not reset the connection before it has read the reply.
        shutdown(fd, SHUT_WR);
        char sink[64 << 10];
        Clock::time_point until = Clock::now() + std::chrono::seconds(1);
        socket.set_deadline(until);
        ec = {};  // A chunked body over the limit left body_limit here.
        while (!ec && Clock::now() < until) socket.Recv(sink, sizeof sink, ec);
      }
      return;
    }
  }
}

}  // namespace topofit::server
