#pragma once
// Socket: non-blocking byte I/O on one accepted connection, plain or through TLS, and Outgoing, a
// reply on its way out. HttpListener's reader thread and its workers use them, never both at once:
// whoever owns the connection at the moment does its I/O.
//
// Contract: nothing here blocks or waits. Each call moves what the socket takes or holds now and
// says how it stands: kOk (bytes moved), kWouldBlock (with the epoll events to wait for: a TLS read
// can need the socket writable, a TLS write readable), kClosed (the peer ended its stream: EOF or a
// close_notify) or kFailed (a reset, a TLS error: the connection is unusable). Our sends pass
// MSG_NOSIGNAL: a peer gone never raises SIGPIPE.

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace topofit::server {

enum class IoStatus { kOk, kWouldBlock, kClosed, kFailed };

struct Io {
  size_t bytes = 0;
  IoStatus status = IoStatus::kOk;
  uint32_t wait = 0;  // With kWouldBlock: EPOLLIN and/or EPOLLOUT.
};

struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
using SslPtr = std::unique_ptr<SSL, SslFree>;

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  int fd() const { return fd_; }
  SSL* ssl() const { return ssl_.get(); }
  // From now on bytes go through TLS (after the handshake, tls_handshake.h).
  void set_tls(SslPtr ssl) { ssl_ = std::move(ssl); }
  // Decrypted bytes wait inside the TLS layer: the socket may not turn readable for them.
  bool Buffered() const { return ssl_ && SSL_pending(ssl_.get()) > 0; }

  Io Read(char* data, size_t size);
  // Sends from `a` and then `b` (one sendmsg on a plain socket).
  Io Write(std::string_view a, std::string_view b = {});
  // Over TLS, unless the connection failed: a close_notify, without waiting for the peer's.
  void CloseNotify();

 private:
  Io TlsStatus(int rc);

  int fd_;
  SslPtr ssl_;
  bool broken_ = false;
};

// A reply's bytes: head then body, and how far they have gone.
struct Outgoing {
  std::string head;
  std::string body;
  size_t sent = 0;

  // Over TLS a reply up to this size is joined into one buffer, so it leaves in one record.
  static constexpr size_t kTlsJoinBytes = 64 << 10;
  static Outgoing Of(std::string head, std::string body, bool tls);
  bool done() const { return sent >= head.size() + body.size(); }
  // Sends what the socket takes now; kOk once everything has gone.
  Io SendSome(Socket& s);
};

// "10.0.0.1:443" or "[::1]:443": the peer of a connected socket, "?" when unknown.
std::string PeerOf(int fd);

}  // namespace topofit::server
