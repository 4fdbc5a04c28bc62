#pragma once
// The server side of a TLS handshake on a non-blocking socket, one step per readiness event, for
// HttpListener's reader thread.
//
// Contract: NewServerSsl() makes the connection's SSL from the context TlsCredentials hands out at
// that moment (partial writes and moving write buffers allowed: a reply's remainder is retried
// from wherever it was stored). StepHandshake() never blocks: it answers kDone, kWouldBlock (with
// the epoll events to wait for), kPlainHttp (the client spoke plain HTTP: the caller answers
// kPlainHttpOnTls of http_wire.h in plain text), or kFailed. A failure is logged with the peer and
// OpenSSL's reason, except a peer that connected and closed without a byte (a TCP probe).

#include <openssl/ssl.h>

#include <cstdint>

#include "extender/server/http_socket.h"

namespace topofit::server {

enum class HandshakeStep { kDone, kWouldBlock, kPlainHttp, kFailed };

struct HandshakeResult {
  HandshakeStep step;
  uint32_t wait = 0;  // With kWouldBlock: EPOLLIN or EPOLLOUT.
};

// Null (and nothing logged) when OpenSSL cannot make one.
SslPtr NewServerSsl(SSL_CTX* ctx, int fd);
HandshakeResult StepHandshake(SSL* ssl, int fd);

}  // namespace topofit::server
