// HTTPS on the extender port over real sockets, with an OpenSSL client: the handshake and a request,
// client certificates (required, from the right CA, the wrong one, none), plain HTTP on the TLS
// port, reloading rotated files without dropping open connections, and every start-up refusal.
// Certificates are made when the tests run (test/util/pki.h); the client is test/util/tls_client.h.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "extender/server/serve_app.h"
#include "extender/server/http_listener.h"
#include "extender/server/listener_test_util.h"
#include "extender/server/tls_credentials.h"
#include "extender/k8s/demo_cluster.h"
#include "test/util/pki.h"
#include "test/util/temp_dir.h"
#include "test/util/tls_client.h"

namespace topofit::server {
namespace {

namespace pki = topofit::testing::pki;
using namespace std::chrono_literals;

// A CA, server certificates for 127.0.0.1 (serials 10, 11, 12), a client certificate from the CA,
// and a second CA with its own client certificate.
struct Pki {
  pki::Key ca_key = pki::NewKey();
  pki::Cert ca = pki::Issue(ca_key.get(), pki::CertSpec("tls-test-ca").Ca());
  pki::Key other_ca_key = pki::NewKey();
  pki::Cert other_ca = pki::Issue(other_ca_key.get(), pki::CertSpec("tls-test-other-ca").Ca().Serial(2));
  pki::Key server_key[3] = {pki::NewKey(), pki::NewKey(), pki::NewKey()};
  pki::Cert server[3] = {ServerCert(0), ServerCert(1), ServerCert(2)};
  pki::Key client_key = pki::NewKey();
  pki::Cert client = pki::Issue(client_key.get(), pki::CertSpec("kube-scheduler").ExtKeyUsage("clientAuth").Serial(20),
                                ca.get(), ca_key.get());
  pki::Key stranger_key = pki::NewKey();
  pki::Cert stranger = pki::Issue(stranger_key.get(), pki::CertSpec("stranger").ExtKeyUsage("clientAuth").Serial(21),
                                  other_ca.get(), other_ca_key.get());
  // Signed by the CA but for servers only: refused as a client certificate.
  pki::Key server_only_key = pki::NewKey();
  pki::Cert server_only = pki::Issue(server_only_key.get(), pki::CertSpec("not-a-client").ExtKeyUsage("serverAuth").Serial(22),
                                     ca.get(), ca_key.get());

  pki::Cert ServerCert(int i) {
    return pki::Issue(server_key[i].get(),
                      pki::CertSpec("topofit-" + std::to_string(i)).San("IP:127.0.0.1,DNS:localhost").Serial(10 + i),
                      ca.get(), ca_key.get());
  }
};

const Pki& GetPki() {
  static const Pki p;
  return p;
}

using topofit::testing::TempDir;

// The server's files in `dir`: tls.crt, tls.key and, with a client CA, ca.crt.
TlsFiles WriteServerFiles(const TempDir& dir, int which, bool client_ca) {
  const Pki& p = GetPki();
  TlsFiles f;
  f.cert_file = dir.Write("tls.crt", pki::Pem(p.server[which].get()));
  f.key_file = dir.Write("tls.key", pki::Pem(p.server_key[which].get()));
  if (client_ca) f.client_ca_file = dir.Write("ca.crt", pki::Pem(p.ca.get()));
  return f;
}

Reply Echo(const HttpRequest& req) {
  Reply r;
  r.content_type = "text/plain";
  r.body = std::string(req.method) + " " + req.path + "|" + std::string(req.body);
  return r;
}

struct TlsServer : testing::RunningListener {
  explicit TlsServer(std::shared_ptr<TlsCredentials> tls) : RunningListener(Options(std::move(tls)), Echo) {}
  static ListenerOptions Options(std::shared_ptr<TlsCredentials> tls) {
    ListenerOptions o;
    o.keep_alive_seconds = 10;
    o.tls = std::move(tls);
    return o;
  }
};

std::shared_ptr<TlsCredentials> MustLoad(const TlsFiles& f, std::chrono::milliseconds reload = 10s) {
  auto c = TlsCredentials::Load(f, reload);
  REQUIRE_MESSAGE(c.ok(), c.error());
  return *c;
}

using testing::ClientTls;

// The shared test client (test/util/tls_client.h), offering h2 first as Go's HTTP client does; its
// own context per connection (SSL_new keeps a reference to it).
struct TlsClient : testing::TlsClient {
  TlsClient(int port, const ClientTls& o) : testing::TlsClient(port, testing::NewClientTls(o.OfferingH2()).get()) {}
};

// Plain bytes on a socket and everything that comes back until the server closes.
std::string PlainExchange(int port, const std::string& out) {
  testing::TlsClient c(port, nullptr);
  REQUIRE_MESSAGE(c.handshake_ok, c.error);
  c.Write(out);
  shutdown(c.fd, SHUT_WR);
  std::string in;
  while (c.ReadSome(in)) {
  }
  return in;
}

}  // namespace

TEST_CASE("tls listener: a verified handshake, ALPN http/1.1, keep-alive requests and a multi-megabyte body") {
  TempDir dir;
  TlsServer s(MustLoad(WriteServerFiles(dir, 0, false)));
  const Pki& p = GetPki();
  TlsClient c(s.listener.port(), ClientTls::Trusting(p.ca.get()));
  REQUIRE_MESSAGE(c.handshake_ok, c.error);
  CHECK(c.PeerSerial() == 10);
  CHECK(c.Alpn() == "http/1.1");
  CHECK(c.Post("/scheduler/filter", "one").find("POST /scheduler/filter|one") != std::string::npos);
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  std::string reply = c.Post("/big", big);
  CHECK(reply.find("HTTP/1.1 200 OK\r\n") == 0);
  CHECK(reply.find("POST /big|" + big) != std::string::npos);
  CHECK(c.Post("/after", "two").find("POST /after|two") != std::string::npos);  // Same connection.
}

TEST_CASE("tls listener: with a client CA, its client certificate is served, and none, another CA's or a server-only one is refused") {
  TempDir dir;
  TlsServer s(MustLoad(WriteServerFiles(dir, 0, true)));
  const Pki& p = GetPki();
  {
    TlsClient ok(s.listener.port(), ClientTls::Trusting(p.ca.get()).With(p.client.get(), p.client_key.get()));
    REQUIRE_MESSAGE(ok.handshake_ok, ok.error);
    CHECK(ok.Post("/x", "y").find("POST /x|y") != std::string::npos);
  }
  struct Case {
    const char* name;
    ClientTls options;
  };
  for (int version : {0, TLS1_2_VERSION}) {
    for (const Case& k : {Case{"no certificate", ClientTls::Trusting(p.ca.get())},
                          Case{"another CA's", ClientTls::Trusting(p.ca.get()).With(p.stranger.get(), p.stranger_key.get())},
                          Case{"server-only", ClientTls::Trusting(p.ca.get()).With(p.server_only.get(), p.server_only_key.get())}}) {
      CAPTURE(k.name);
      CAPTURE(version);
      ClientTls o = k.options;
      o.max_version = version;
      TlsClient c(s.listener.port(), o);
      // TLS 1.3 checks the client's certificate after the client's side of the handshake is done:
      // the refusal arrives as an alert instead of the reply.
      std::string reply = c.Post("/x", "y");
      CHECK(reply.empty());
      CHECK(!c.error.empty());
      if (version == TLS1_2_VERSION) CHECK_FALSE(c.handshake_ok);
    }
  }
}

TEST_CASE("tls listener: plain HTTP on the TLS port gets a plain 400, a TCP probe nothing, and the port keeps serving") {
  TempDir dir;
  TlsServer s(MustLoad(WriteServerFiles(dir, 0, false)));
  std::string in = PlainExchange(s.listener.port(), "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(in.find("HTTP/1.0 400 Bad Request\r\n") == 0);
  CHECK(in.find("Client sent an HTTP request to an HTTPS server.") != std::string::npos);
  CHECK(PlainExchange(s.listener.port(), "").empty());  // Connect and close: no reply, no log.
  CHECK(PlainExchange(s.listener.port(), std::string("\x16\x03\x01\x00\x05garbage", 12)).find("HTTP") == std::string::npos);
  TlsClient c(s.listener.port(), ClientTls::Trusting(GetPki().ca.get()));
  REQUIRE_MESSAGE(c.handshake_ok, c.error);
  CHECK(c.Post("/x", "y").find("POST /x|y") != std::string::npos);
}

TEST_CASE("tls listener: rotated files reach new connections, open ones keep serving, a bad pair keeps the old one") {
  TempDir dir;
  const Pki& p = GetPki();
  TlsFiles files = WriteServerFiles(dir, 0, false);
  auto creds = MustLoad(files, 50ms);
  TlsServer s(creds);
  TlsClient before(s.listener.port(), ClientTls::Trusting(p.ca.get()));
  REQUIRE_MESSAGE(before.handshake_ok, before.error);
  CHECK(before.PeerSerial() == 10);
  CHECK(before.Post("/a", "1").find("POST /a|1") != std::string::npos);

  // Serial of what a new connection sees once it changed from `from`, or `from` after 5 s.
  auto next_serial = [&](long from) {
    auto until = std::chrono::steady_clock::now() + 5s;
    for (;;) {
      TlsClient c(s.listener.port(), ClientTls::Trusting(p.ca.get()));
      REQUIRE_MESSAGE(c.handshake_ok, c.error);
      if (c.PeerSerial() != from || std::chrono::steady_clock::now() > until) return c.PeerSerial();
      std::this_thread::sleep_for(20ms);
    }
  };

  // The new pair, key first then certificate, as a tool that writes two files does.
  dir.Write("tls.key", pki::Pem(p.server_key[1].get()));
  dir.Write("tls.crt", pki::Pem(p.server[1].get()));
  CHECK(next_serial(10) == 11);
  CHECK(creds->Describe().find("serial 0B") != std::string::npos);
  // The connection opened before the change still serves, with the certificate it began with.
  CHECK(before.Post("/b", "2").find("POST /b|2") != std::string::npos);
  CHECK(before.PeerSerial() == 10);

  // A certificate whose key is not in the key file: refused, the previous pair stays.
  dir.Write("tls.crt", pki::Pem(p.server[2].get()));
  std::this_thread::sleep_for(300ms);  // Several reload intervals.
  CHECK_FALSE(creds->RefreshNow());
  CHECK(next_serial(-1) == 11);
  // Garbage in the certificate file: the same.
  dir.Write("tls.crt", "not a certificate\n");
  std::this_thread::sleep_for(300ms);
  CHECK(next_serial(-1) == 11);
  // The matching key arrives: the pair loads.
  dir.Write("tls.crt", pki::Pem(p.server[2].get()));
  dir.Write("tls.key", pki::Pem(p.server_key[2].get()));
  CHECK(next_serial(11) == 12);
  CHECK(before.Post("/c", "3").find("POST /c|3") != std::string::npos);
}

TEST_CASE("tls listener: a replaced client CA file decides for new connections") {
  TempDir dir;
  const Pki& p = GetPki();
  auto creds = MustLoad(WriteServerFiles(dir, 0, true), 50ms);
  TlsServer s(creds);
  auto served = [&](X509* cert, EVP_PKEY* key) {
    TlsClient c(s.listener.port(), ClientTls::Trusting(p.ca.get()).With(cert, key));
    return !c.Post("/x", "y").empty();
  };
  CHECK(served(p.client.get(), p.client_key.get()));
  CHECK_FALSE(served(p.stranger.get(), p.stranger_key.get()));
  dir.Write("ca.crt", pki::Pem(p.other_ca.get()));
  auto until = std::chrono::steady_clock::now() + 5s;
  while (!served(p.stranger.get(), p.stranger_key.get()) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  CHECK(served(p.stranger.get(), p.stranger_key.get()));
  CHECK_FALSE(served(p.client.get(), p.client_key.get()));
}

TEST_CASE("tls credentials: every bad file is refused at start-up with the flag and the file named") {
  TempDir dir;
  const Pki& p = GetPki();
  std::string cert = dir.Write("tls.crt", pki::Pem(p.server[0].get()));
  std::string key = dir.Write("tls.key", pki::Pem(p.server_key[0].get()));
  std::string other_key = dir.Write("other.key", pki::Pem(p.server_key[1].get()));
  std::string ca = dir.Write("ca.crt", pki::Pem(p.ca.get()));
  std::string not_ca = dir.Write("not-ca.crt", pki::Pem(p.client.get()));
  std::string ca_then_leaf = dir.Write("mixed.crt", pki::Pem(p.ca.get()) + pki::Pem(p.client.get()));
  std::string empty = dir.Write("empty.pem", "");
  std::string damaged = dir.Write("damaged.crt", "-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n");
  std::string missing = dir.File("missing.crt");
  std::string directory = dir.path();
  struct Case {
    TlsFiles files;
    std::string want;
  };
  const Case cases[] = {
      {{missing, key, ""}, "--tls-cert-file " + missing + ": cannot open"},
      {{directory, key, ""}, "--tls-cert-file " + directory + ": cannot"},
      {{cert, missing, ""}, "--tls-private-key-file " + missing + ": cannot open"},
      {{empty, key, ""}, "--tls-cert-file " + empty + ": no PEM certificate in the file"},
      {{damaged, key, ""}, "--tls-cert-file " + damaged + ": a damaged PEM certificate"},
      {{key, key, ""}, "--tls-cert-file " + key + ": no PEM certificate in the file"},
      {{cert, cert, ""}, "--tls-private-key-file " + cert + ": no unencrypted PEM private key in the file"},
      {{cert, other_key, ""}, "--tls-private-key-file " + other_key + ": the key does not belong to the certificate in " + cert},
      {{cert, key, missing}, "--client-ca-file " + missing + ": cannot open"},
      {{cert, key, empty}, "--client-ca-file " + empty + ": no PEM certificate in the file"},
      {{cert, key, not_ca}, "--client-ca-file " + not_ca + ": certificate /CN=kube-scheduler is not a CA"},
      {{cert, key, ca_then_leaf}, "--client-ca-file " + ca_then_leaf + ": certificate /CN=kube-scheduler is not a CA"},
      {{cert, "", ""}, "--tls-private-key-file is required with --tls-cert-file"},
      {{"", key, ""}, "--tls-cert-file is required"},
      {{"", "", ca}, "--tls-cert-file is required"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.want);
    auto loaded = TlsCredentials::Load(c.files, 10s);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().find(c.want) != std::string::npos);
  }
  CHECK(TlsCredentials::Load({cert, key, ca}, 10s).ok());
  // A chain in the certificate file (leaf, then the CA) loads.
  std::string chain = dir.Write("chain.crt", pki::Pem(p.server[0].get()) + pki::Pem(p.ca.get()));
  CHECK(TlsCredentials::Load({chain, key, ""}, 10s).ok());
}

TEST_CASE("tls extender server: the verbs answer over HTTPS only, the separate ops listener in plain HTTP") {
  TempDir dir;
  const Pki& p = GetPki();
  ServeConfig cfg;
  cfg.server.host = "127.0.0.1";
  cfg.server.port = 0;
  cfg.server.ops_host = "127.0.0.1";
  cfg.server.ops_port = 0;
  cfg.server.threads = 4;
  cfg.server.keep_alive_seconds = 2;
  cfg.server.tls = WriteServerFiles(dir, 0, true);
  auto app = ServeApp::Create(cfg, "", nullptr, /*log_decisions=*/false);
  REQUIRE_MESSAGE(app.ok(), app.error());
  (*app)->Load(*k8s::LoadDemoCluster());
  REQUIRE((*app)->server().Start().ok());
  {
    TlsClient c((*app)->server().port(), ClientTls::Trusting(p.ca.get()).With(p.client.get(), p.client_key.get()));
    REQUIRE_MESSAGE(c.handshake_ok, c.error);
    std::string reply = c.Post("/scheduler/filter",
                               R"({"Pod":{"metadata":{"name":"p","namespace":"t","uid":"u1"},"spec":{"containers":[{"name":"c",)"
                               R"("resources":{"limits":{"nvidia.com/gpu":"2"}}}]}},"Nodes":null,"NodeNames":["dgx-v100-1","pcie-1"]})");
    CHECK(reply.find("HTTP/1.1 200 OK") == 0);
    CHECK(reply.find("\"NodeNames\"") != std::string::npos);
  }
  CHECK(PlainExchange((*app)->server().port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").find("HTTP/1.0 400") == 0);
  std::string ops = PlainExchange((*app)->server().ops_port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(ops.find("HTTP/1.1 200 OK") == 0);
  (*app)->server().Stop();
}

TEST_CASE("serve config: the TLS keys") {
  ServeConfig cfg;
  REQUIRE(ApplyConfigYaml("tlsCertFile: /c\ntlsPrivateKeyFile: /k\nclientCAFile: /ca\ntlsReloadInterval: 250ms\n", cfg).ok());
  CHECK(cfg.server.tls.cert_file == "/c");
  CHECK(cfg.server.tls.key_file == "/k");
  CHECK(cfg.server.tls.client_ca_file == "/ca");
  CHECK(cfg.server.tls_reload_interval == 250ms);
  Status bad = ApplyConfigYaml("tlsReloadInterval: 0s\n", cfg);
  CHECK(bad.error().find("config tlsReloadInterval: invalid duration '0s': must be positive") == 0);
}

}  // namespace topofit::server
