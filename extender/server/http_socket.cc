#include "extender/server/http_socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>

namespace topofit::server {

Io Socket::Read(char* data, size_t size) {
  if (ssl_) {
    size_t n = 0;
    int rc = SSL_read_ex(ssl_.get(), data, size, &n);
    if (rc == 1) return {n, IoStatus::kOk, 0};
    return TlsStatus(rc);
  }
  for (;;) {
    ssize_t n = recv(fd_, data, size, 0);
    if (n > 0) return {static_cast<size_t>(n), IoStatus::kOk, 0};
    if (n == 0) return {0, IoStatus::kClosed, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, IoStatus::kWouldBlock, EPOLLIN};
    return {0, IoStatus::kFailed, 0};
  }
}

Io Socket::Write(std::string_view a, std::string_view b) {
  if (ssl_) {
    std::string_view piece = a.empty() ? b : a;
    size_t n = 0;
    int rc = SSL_write_ex(ssl_.get(), piece.data(), piece.size(), &n);
    if (rc == 1) return {n, IoStatus::kOk, 0};
    return TlsStatus(rc);
  }
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}};
  msghdr msg{};
  msg.msg_iov = a.empty() ? iov + 1 : iov;
  msg.msg_iovlen = a.empty() || b.empty() ? 1 : 2;
  for (;;) {
    ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n >= 0) return {static_cast<size_t>(n), IoStatus::kOk, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, IoStatus::kWouldBlock, EPOLLOUT};
    return {0, IoStatus::kFailed, 0};
  }
}

Io Socket::TlsStatus(int rc) {
  int err = SSL_get_error(ssl_.get(), rc);
  ERR_clear_error();
  if (err == SSL_ERROR_WANT_READ) return {0, IoStatus::kWouldBlock, EPOLLIN};
  if (err == SSL_ERROR_WANT_WRITE) return {0, IoStatus::kWouldBlock, EPOLLOUT};
  // Closed (close_notify or a bare EOF), reset, or a TLS error: the connection is unusable.
  broken_ = err != SSL_ERROR_ZERO_RETURN;
  return {0, err == SSL_ERROR_ZERO_RETURN ? IoStatus::kClosed : IoStatus::kFailed, 0};
}

void Socket::CloseNotify() {
  if (!ssl_ || broken_) return;
  SSL_shutdown(ssl_.get());
  ERR_clear_error();
}

Outgoing Outgoing::Of(std::string head, std::string body, bool tls) {
  Outgoing out{std::move(head), std::move(body), 0};
  if (tls && out.head.size() + out.body.size() <= kTlsJoinBytes) {
    out.head += out.body;
    out.body.clear();
  }
  return out;
}

Io Outgoing::SendSome(Socket& s) {
  Io last;
  while (!done()) {
    std::string_view h = sent < head.size() ? std::string_view(head).substr(sent) : std::string_view();
    std::string_view b = std::string_view(body).substr(sent < head.size() ? 0 : sent - head.size());
    last = s.Write(h, b);
    if (last.status != IoStatus::kOk) return last;
    sent += last.bytes;
  }
  return {0, IoStatus::kOk, 0};
}

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

}  // namespace topofit::server
