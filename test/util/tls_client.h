#pragma once
// An HTTP/1.1 client over OpenSSL (or plain TCP) on a blocking loopback socket, for the tests and
// perftests of the extender's listeners. Test-only, header-only (as pki.h).
//
//   testing::SslCtx ctx = testing::NewClientTls(testing::ClientTls::Trusting(ca).With(cert, key));
//   testing::TlsClient c(port, ctx.get());   // nullptr: plain HTTP
//   if (!c.handshake_ok) ... c.error;
//   std::string reply = c.Exchange(testing::PostRequest("/x", "{}"));  // "" on failure, c.error says why
//
// TlsClient connects to 127.0.0.1:`port` with TCP_NODELAY and a 5 s receive timeout (a refused
// handshake fails a test instead of hanging it), then, with a context, does the TLS handshake with
// the server name 127.0.0.1 (checked when the context verifies the peer). Failures never abort:
// `handshake_ok` is false (or a reply is "") and `error` holds OpenSSL's reason, or what
// SSL_get_error and errno said (a reset after the server's alert leaves no reason). NewClientTls
// aborts the process when OpenSSL refuses the options (a broken test, as pki.h does).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "test/util/pki.h"

namespace topofit::testing {

// What the client's TLS context does: ClientTls::Trusting(ca).With(cert, key).
struct ClientTls {
  X509* trust = nullptr;  // Verify the server against this CA (and its name, 127.0.0.1).
  X509* cert = nullptr;   // A client certificate, with its key.
  EVP_PKEY* key = nullptr;
  int max_version = 0;    // 0: the highest; TLS1_2_VERSION to see a refusal during the handshake.
  bool offer_h2 = false;  // ALPN "h2" then "http/1.1", as Go's HTTP client offers.

  static ClientTls Trusting(X509* ca) {
    ClientTls o;
    o.trust = ca;
    return o;
  }
  ClientTls With(X509* c, EVP_PKEY* k) const {
    ClientTls o = *this;
    o.cert = c;
    o.key = k;
    return o;
  }
  ClientTls OfferingH2() const {
    ClientTls o = *this;
    o.offer_h2 = true;
    return o;
  }
};

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtx = std::unique_ptr<SSL_CTX, SslCtxFree>;

inline SslCtx NewClientTls(const ClientTls& o) {
  SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  pki::Check(ctx != nullptr, "SSL_CTX_new");
  if (o.max_version) pki::Check(SSL_CTX_set_max_proto_version(ctx.get(), o.max_version) == 1, "set_max_proto_version");
  if (o.trust) {
    pki::Check(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), o.trust) == 1, "X509_STORE_add_cert");
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  }
  if (o.cert) {
    pki::Check(SSL_CTX_use_certificate(ctx.get(), o.cert) == 1, "SSL_CTX_use_certificate");
    pki::Check(SSL_CTX_use_PrivateKey(ctx.get(), o.key) == 1, "SSL_CTX_use_PrivateKey");
  }
  if (o.offer_h2) {
    static const unsigned char kAlpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    pki::Check(SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof kAlpn) == 0, "SSL_CTX_set_alpn_protos");
  }
  return ctx;
}

// "POST <path> HTTP/1.1" with a JSON body, framed by Content-Length; `close` adds Connection: close.
inline std::string PostRequest(const std::string& path, const std::string& body, bool close = false) {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         (close ? "Connection: close\r\n" : "") + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class TlsClient {
 public:
  int fd = -1;
  SSL* ssl = nullptr;
  bool handshake_ok = false;  // Connected, and with a context the handshake succeeded.
  std::string error;

  TlsClient(int port, SSL_CTX* ctx) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      error = std::string("socket: ") + std::strerror(errno);
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      error = std::string("connect: ") + std::strerror(errno);
      return;
    }
    if (!ctx) {
      handshake_ok = true;
      return;
    }
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set1_host(ssl, "127.0.0.1");
    ERR_clear_error();
    int rc = SSL_connect(ssl);
    handshake_ok = rc == 1;
    if (!handshake_ok) error = Reason(rc);
  }
  ~TlsClient() {
    if (ssl) SSL_free(ssl);
    if (fd >= 0) close(fd);
  }
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  // OpenSSL's reason for the last failure, or what SSL_get_error said.
  std::string Reason(int rc) const {
    char buf[256] = "";
    if (unsigned long e = ERR_get_error()) {
      ERR_error_string_n(e, buf, sizeof buf);
    } else {
      std::snprintf(buf, sizeof buf, "SSL_get_error %d, errno %d", ssl ? SSL_get_error(ssl, rc) : -1, errno);
    }
    ERR_clear_error();
    return buf;
  }
  long PeerSerial() const {
    X509* peer = ssl ? SSL_get1_peer_certificate(ssl) : nullptr;
    if (!peer) return -1;
    long serial = ASN1_INTEGER_get(X509_get0_serialNumber(peer));
    X509_free(peer);
    return serial;
  }
  std::string Alpn() const {
    const unsigned char* p = nullptr;
    unsigned int n = 0;
    if (ssl) SSL_get0_alpn_selected(ssl, &p, &n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }

  bool Write(const std::string& out) {
    if (!handshake_ok) return false;
    if (ssl) {
      size_t written = 0;
      if (int rc = SSL_write_ex(ssl, out.data(), out.size(), &written); rc != 1) {
        error = Reason(rc);
        return false;
      }
      return true;
    }
    if (send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
      error = std::string("send: ") + std::strerror(errno);
      return false;
    }
    return true;
  }
  // Appends what one read returns; false at the end of the stream or on an error.
  bool ReadSome(std::string& in) {
    char buf[65536];
    size_t n = 0;
    if (ssl) {
      if (int rc = SSL_read_ex(ssl, buf, sizeof buf, &n); rc != 1) {
        error = Reason(rc);
        return false;
      }
    } else {
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r <= 0) {
        if (r < 0) error = std::string("recv: ") + std::strerror(errno);
        return false;
      }
      n = static_cast<size_t>(r);
    }
    in.append(buf, n);
    return true;
  }
  // One reply framed by Content-Length (head and body); "" when the connection failed first.
  std::string ReadReply() {
    std::string in;
    for (;;) {
      size_t head_end = in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t cl = in.find("Content-Length: ");
        if (cl != std::string::npos && in.size() >= head_end + 4 + std::stoul(in.substr(cl + 16))) return in;
      }
      if (!ReadSome(in)) return "";
    }
  }
  // Writes `request` and reads one reply; "" on failure (error says why).
  std::string Exchange(const std::string& request) {
    if (!Write(request)) return "";
    return ReadReply();
  }
  std::string Post(const std::string& path, const std::string& body) { return Exchange(PostRequest(path, body)); }
};

}  // namespace topofit::testing
