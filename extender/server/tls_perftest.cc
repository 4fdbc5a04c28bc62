// What HTTPS costs on the extender port, against plain HTTP on the same transport (HttpListener), over
// loopback, client and server in one process:
//   connect: a new connection, one small request with Connection: close, read the reply - plain; TLS
//            with an EC P-256 certificate; TLS with RSA-2048; TLS P-256 with a client certificate
//            checked against --client-ca-file. Full handshakes (TLS 1.3, no session resumption, as
//            kube-scheduler's Go client without a session cache does).
//   keep-alive: one request on an open connection, 1 KB and 150 KB echoed (a filter call of 5,000
//            node names in and out) - plain and TLS.
// Within a group the variants alternate request by request, so all see the same machine noise.
// Prints median and p99 per variant, in microseconds, and the ratio to plain.
//   build/extender/server/tls_perftest [--iterations N]      (default 2000; connect runs N/2)
#include <openssl/ssl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "extender/server/http_listener.h"
#include "extender/server/listener_test_util.h"
#include "test/util/temp_dir.h"
#include "extender/server/tls_credentials.h"
#include "test/util/pki.h"
#include "test/util/tls_client.h"

namespace {

using namespace topofit::server;
namespace pki = topofit::testing::pki;
using Clock = std::chrono::steady_clock;

void Die(const char* what) {
  std::fprintf(stderr, "tls_perftest: %s\n", what);
  std::exit(1);
}

struct Server : topofit::testing::RunningListener {
  explicit Server(std::shared_ptr<TlsCredentials> tls)
      : RunningListener(Options(std::move(tls)), [](const HttpRequest& req) {
          Reply r;
          r.content_type = "application/json";
          r.body = std::string(req.body);
          return r;
        }) {}
  static ListenerOptions Options(std::shared_ptr<TlsCredentials> tls) {
    ListenerOptions o;
    o.tls = std::move(tls);
    return o;
  }
};

// A blocking client connection, plain (ctx nullptr) or TLS: the shared test client, failures fatal.
struct Conn {
  topofit::testing::TlsClient client;
  Conn(int port, SSL_CTX* ctx) : client(port, ctx) {
    if (!client.handshake_ok) Die(("connect or handshake: " + client.error).c_str());
  }
  void Write(const std::string& s) {
    if (!client.Write(s)) Die(("write: " + client.error).c_str());
  }
  void ReadReply() {
    if (client.ReadReply().empty()) Die(("read: " + client.error).c_str());
  }
};

std::string Request(const std::string& body, bool close) {
  return topofit::testing::PostRequest("/scheduler/filter", body, close);
}

struct Stats {
  std::string name;
  std::vector<double> us;
  double Pct(double p) {
    std::sort(us.begin(), us.end());
    return us[std::min(us.size() - 1, size_t(p * double(us.size())))];
  }
};

// Runs each op in turn, `n` rounds; prints a table.
void Group(const char* title, int n, std::vector<std::pair<std::string, std::function<void()>>> ops) {
  std::vector<Stats> stats;
  for (auto& [name, op] : ops) stats.push_back({name, {}});
  for (int w = 0; w < std::max(1, n / 20); ++w)
    for (auto& [name, op] : ops) op();  // Warm-up.
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < ops.size(); ++k) {
      auto t0 = Clock::now();
      ops[k].second();
      stats[k].us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  std::printf("\n%s (%d each)\n%-34s %10s %10s %14s\n", title, n, "variant", "median us", "p99 us", "x plain (med)");
  double base = stats[0].Pct(0.5);
  for (Stats& s : stats) {
    double med = s.Pct(0.5), p99 = s.Pct(0.99);
    std::printf("%-34s %10.1f %10.1f %13.2fx\n", s.name.c_str(), med, p99, med / base);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 2000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
  topofit::SetLogLevel(topofit::LogLevel::kError);

  topofit::testing::TempDir dir("topofit-tls-perf");
  auto write = [&](const std::string& name, const std::string& text) { return dir.Write(name, text); };
  pki::Key ca_key = pki::NewKey();
  pki::Cert ca = pki::Issue(ca_key.get(), pki::CertSpec("perf-ca").Ca());
  pki::Key ec_key = pki::NewKey();
  pki::Cert ec = pki::Issue(ec_key.get(), pki::CertSpec("perf-ec").San("IP:127.0.0.1").Serial(2), ca.get(), ca_key.get());
  pki::Key rsa_key = pki::NewRsaKey(2048);
  pki::Cert rsa = pki::Issue(rsa_key.get(), pki::CertSpec("perf-rsa").San("IP:127.0.0.1").Serial(3), ca.get(), ca_key.get());
  pki::Key client_key = pki::NewKey();
  pki::Cert client = pki::Issue(client_key.get(), pki::CertSpec("perf-client").ExtKeyUsage("clientAuth").Serial(4), ca.get(),
                                ca_key.get());
  std::string ca_file = write("ca.crt", pki::Pem(ca.get()));
  TlsFiles ec_files{write("ec.crt", pki::Pem(ec.get())), write("ec.key", pki::Pem(ec_key.get())), ""};
  TlsFiles rsa_files{write("rsa.crt", pki::Pem(rsa.get())), write("rsa.key", pki::Pem(rsa_key.get())), ""};
  TlsFiles mtls_files = ec_files;
  mtls_files.client_ca_file = ca_file;
  auto load = [](const TlsFiles& f) {
    auto c = TlsCredentials::Load(f, std::chrono::seconds(10));
    if (!c) Die(c.error().c_str());
    return *c;
  };

  Server plain(nullptr), tls_ec(load(ec_files)), tls_rsa(load(rsa_files)), tls_mtls(load(mtls_files));
  // The client verifies the server as kube-scheduler does with a caFile.
  using topofit::testing::ClientTls;
  topofit::testing::SslCtx verify = topofit::testing::NewClientTls(ClientTls::Trusting(ca.get()));
  topofit::testing::SslCtx with_cert =
      topofit::testing::NewClientTls(ClientTls::Trusting(ca.get()).With(client.get(), client_key.get()));

  const std::string small = Request("{}", true);
  auto fresh = [&](int port, SSL_CTX* ctx) {
    return [&small, port, ctx] {
      Conn c(port, ctx);
      c.Write(small);
      c.ReadReply();
    };
  };
  Group("connect: new connection + one request", std::max(1, iterations / 2),
        {{"plain HTTP", fresh(plain.listener.port(), nullptr)},
         {"TLS, EC P-256", fresh(tls_ec.listener.port(), verify.get())},
         {"TLS, RSA-2048", fresh(tls_rsa.listener.port(), verify.get())},
         {"TLS, EC P-256 + client certificate", fresh(tls_mtls.listener.port(), with_cert.get())}});

  for (size_t size : {size_t(1) << 10, size_t(150) << 10}) {
    std::string body(size, 'n');
    std::string req = Request(body, false);
    Conn p(plain.listener.port(), nullptr), t(tls_mtls.listener.port(), with_cert.get());
    auto on = [&req](Conn& c) {
      return [&req, &c] {
        c.Write(req);
        c.ReadReply();
      };
    };
    std::string title = "keep-alive: one request, " + std::to_string(size >> 10) + " KB in and out";
    Group(title.c_str(), iterations, {{"plain HTTP", on(p)}, {"TLS (client certificate)", on(t)}});
  }
  return 0;
}
