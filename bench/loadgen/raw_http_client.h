#pragma once
// RawHttpClient: the client side of extender_loadgen and extender_soak - HTTP/1.1 requests over one
// keep-alive connection
// with large socket reads, as kube-scheduler's Go client reads. cpp-httplib's client reads 4 KB at
// a time with a poll before each read, which for a 3.4 MB full-node reply costs more than the server
// does; measuring through it would time the client.
//
// Needs replies with Content-Length (cpp-httplib sends it for every reply topofit and the floor
// make). Blocking; one request at a time; not thread-safe.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace topofit::bench {

class RawHttpClient {
 public:
  RawHttpClient(const char* ip, int port) : ip_(ip), port_(port) {}
  ~RawHttpClient() { Close(); }
  RawHttpClient(const RawHttpClient&) = delete;
  RawHttpClient& operator=(const RawHttpClient&) = delete;

  // Sends the request and reads the whole reply. Returns the HTTP status, 0 on any failure.
  int Post(std::string_view path, std::string_view body) { return Send("POST", path, body); }
  int Send(std::string_view method, std::string_view path, std::string_view body) {
    if (fd_ >= 0 && drop_closed_idle_ && PeerClosed()) Close();
    if (fd_ < 0 && !Connect()) return 0;
    request_.clear();
    request_ += method;
    request_ += ' ';
    request_ += path;
    request_ += " HTTP/1.1\r\nHost: loadgen\r\nContent-Type: application/json\r\nContent-Length: ";
    request_ += std::to_string(body.size());
    request_ += "\r\n\r\n";
    if (!SendAll(request_) || !SendAll(body)) return Fail();
    // Headers first, then exactly Content-Length bytes of body.
    size_t have = 0, header_end = std::string::npos;
    while (header_end == std::string::npos) {
      if (!Receive(have)) return Fail();
      header_end = std::string_view(buffer_.data(), have).find("\r\n\r\n");
    }
    std::string_view head(buffer_.data(), header_end);
    if (!head.starts_with("HTTP/1.1 ") || head.size() < 12) return Fail();
    const int status = std::atoi(std::string(head.substr(9, 3)).c_str());
    const size_t length = ContentLength(head);
    if (length == std::string::npos) return Fail();
    const size_t total = header_end + 4 + length;
    if (buffer_.size() < total) buffer_.resize(total);
    while (have < total)
      if (!Receive(have)) return Fail();
    last_body_ = std::string_view(buffer_.data() + header_end + 4, length);
    return status;
  }
  // The body of the last successful request; valid until the next one.
  std::string_view last_body() const { return last_body_; }
  // When on, a kept-alive connection that the server has closed is dropped before the next request,
  // which goes on a new connection - as Go's http.Transport drops an idle connection that its read
  // loop saw closed. Off (the default) saves the poll: servers that close idle connections only
  // after minutes never need it.
  void set_drop_closed_idle(bool on) { drop_closed_idle_ = on; }

 private:
  bool Connect() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    ::inet_pton(AF_INET, ip_, &addr.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return Fail() != 0;
    return true;
  }
  bool SendAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Appends what the socket has (up to the buffer's free room, at least 256 KB) at buffer_[have].
  // Waits in poll, not in a blocking recv, as Go's netpoller does: a reader blocked inside recv
  // owns the socket while the sender's packets arrive, and on this VM the two then contend for its
  // lock (a fifth of all samples in a profile).
  bool Receive(size_t& have) {
    if (buffer_.size() - have < (256 << 10)) buffer_.resize(have + (256 << 10));
    for (;;) {
      ssize_t n = ::recv(fd_, buffer_.data() + have, buffer_.size() - have, MSG_DONTWAIT);
      if (n > 0) {
        have += static_cast<size_t>(n);
        return true;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 30'000) <= 0) return false;
    }
  }
  static size_t ContentLength(std::string_view head) {
    for (size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
      std::string_view line = head.substr(at + 2, head.find("\r\n", at + 2) - (at + 2));
      constexpr std::string_view kName = "content-length:";
      if (line.size() <= kName.size()) continue;
      bool match = true;
      for (size_t i = 0; i < kName.size(); ++i) match &= std::tolower(static_cast<unsigned char>(line[i])) == kName[i];
      if (match) return std::strtoull(std::string(line.substr(kName.size())).c_str(), nullptr, 10);
    }
    return std::string::npos;
  }
  bool PeerClosed() const {
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) != 0;
  }
  int Fail() {
    Close();
    return 0;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  const char* ip_;
  int port_;
  int fd_ = -1;
  bool drop_closed_idle_ = false;
  std::string request_, buffer_;
  std::string_view last_body_;
};

}  // namespace topofit::bench
