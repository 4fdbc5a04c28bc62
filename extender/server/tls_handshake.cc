#include "extender/server/tls_handshake.h"

#include <openssl/err.h>
#include <sys/epoll.h>

#include "base/log.h"

namespace topofit::server {

SslPtr NewServerSsl(SSL_CTX* ctx, int fd) {
  SslPtr ssl(SSL_new(ctx));
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1) {
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_mode(ssl.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ssl;
}

HandshakeResult StepHandshake(SSL* ssl, int fd) {
  ERR_clear_error();
  int rc = SSL_accept(ssl);
  if (rc == 1) return {HandshakeStep::kDone};
  int err = SSL_get_error(ssl, rc);
  if (err == SSL_ERROR_WANT_READ) return {HandshakeStep::kWouldBlock, EPOLLIN};
  if (err == SSL_ERROR_WANT_WRITE) return {HandshakeStep::kWouldBlock, EPOLLOUT};
  unsigned long e = ERR_peek_error();
  HandshakeStep step = HandshakeStep::kFailed;
  if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST) {
    step = HandshakeStep::kPlainHttp;
  } else if (e != 0) {
    char reason[256];
    ERR_error_string_n(e, reason, sizeof reason);
    Log(LogLevel::kWarn, "TLS handshake failed", {{"peer", PeerOf(fd)}, {"error", reason}});
  } else if (SSL_get_state(ssl) != TLS_ST_BEFORE) {
    // A peer gone mid-handshake (after its first bytes), with nothing in OpenSSL's queue.
    Log(LogLevel::kWarn, "TLS handshake failed", {{"peer", PeerOf(fd)}, {"error", "connection closed by the peer"}});
  }
  ERR_clear_error();
  return {step};
}

}  // namespace topofit::server
