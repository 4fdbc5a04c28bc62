// `topofit serve` with TLS flags, as a process: bad certificate files stop it at start-up with exit
// status 2 and the flag and file named; good ones serve HTTPS (verified against the CA, a client
// certificate required), plain HTTP on that port gets a 400, and the config file's keys work too.
#include <doctest/doctest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "extender/cli/cli_test_util.h"
#include "test/util/pki.h"
#include "test/util/serve_process.h"
#include "test/util/temp_dir.h"

namespace {

namespace pki = topofit::testing::pki;
using topofit::testing::ServeProcess;
using topofit::testing::TempDir;
using topofit::cli::testing::Topofit;

// A CA, a server certificate for 127.0.0.1 and a client certificate, as files in a fresh directory.
struct Files {
  TempDir dir{"topofit-serve-tls"};
  std::string ca, cert, key, client_cert, client_key, other_key;
  Files() {
    pki::Key ca_key = pki::NewKey();
    pki::Cert ca_cert = pki::Issue(ca_key.get(), pki::CertSpec("serve-tls-ca").Ca());
    pki::Key server_key = pki::NewKey();
    pki::Cert server = pki::Issue(server_key.get(), pki::CertSpec("topofit").San("IP:127.0.0.1").Serial(2),
                                  ca_cert.get(), ca_key.get());
    pki::Key ck = pki::NewKey();
    pki::Cert client = pki::Issue(ck.get(), pki::CertSpec("kube-scheduler").ExtKeyUsage("clientAuth").Serial(3),
                                  ca_cert.get(), ca_key.get());
    ca = dir.Write("ca.crt", pki::Pem(ca_cert.get()));
    cert = dir.Write("tls.crt", pki::Pem(server.get()));
    key = dir.Write("tls.key", pki::Pem(server_key.get()));
    client_cert = dir.Write("client.crt", pki::Pem(client.get()));
    client_key = dir.Write("client.key", pki::Pem(ck.get()));
    other_key = dir.Write("other.key", pki::Pem(pki::NewKey().get()));
  }
};

}  // namespace

TEST_CASE("serve --tls-*: a bad file stops start-up with exit status 2, naming the flag and the file") {
  Files f;
  std::string missing = f.dir.File("missing.crt");
  struct Case {
    std::string args, want;
  };
  const Case cases[] = {
      {"--tls-cert-file " + missing + " --tls-private-key-file " + f.key, "--tls-cert-file " + missing + ": cannot open"},
      {"--tls-cert-file " + f.cert + " --tls-private-key-file " + f.other_key,
       "--tls-private-key-file " + f.other_key + ": the key does not belong to the certificate in " + f.cert},
      {"--tls-cert-file " + f.cert + " --tls-private-key-file " + f.key + " --client-ca-file " + f.client_cert,
       "--client-ca-file " + f.client_cert + ": certificate /CN=kube-scheduler is not a CA"},
      {"--tls-cert-file " + f.cert, "--tls-private-key-file is required with --tls-cert-file"},
      {"--client-ca-file " + f.ca, "--tls-cert-file is required"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    auto r = Topofit("serve --listen 127.0.0.1:0 " + c.args);
    CHECK(r.status == 2);
    CHECK(r.err.find("cannot serve") != std::string::npos);
    CHECK(r.err.find(c.want) != std::string::npos);
  }
  // The same from the config file.
  std::string config = f.dir.Write("serve.yaml", "tlsCertFile: " + f.cert + "\ntlsPrivateKeyFile: " + f.other_key + "\n");
  auto r = Topofit("serve --listen 127.0.0.1:0 --config " + config);
  CHECK(r.status == 2);
  CHECK(r.err.find("the key does not belong to the certificate") != std::string::npos);
}

TEST_CASE("serve --tls-*: HTTPS with a required client certificate, and plain HTTP on the port gets a 400") {
  Files f;
  ServeProcess serve({"--tls-cert-file", f.cert, "--tls-private-key-file", f.key, "--client-ca-file", f.ca});
  CHECK(serve.log().find("tls=\"on, client certificates required\"") != std::string::npos);
  {
    httplib::SSLClient client("127.0.0.1", serve.port(), f.client_cert, f.client_key);
    client.set_ca_cert_path(f.ca.c_str());
    client.enable_server_certificate_verification(true);
    auto res = client.Get("/readyz");
    REQUIRE_MESSAGE(res, httplib::to_string(res.error()));
    CHECK(res->status == 200);
  }
  {
    httplib::SSLClient anonymous("127.0.0.1", serve.port());
    anonymous.set_ca_cert_path(f.ca.c_str());
    anonymous.enable_server_certificate_verification(true);
    auto res = anonymous.Get("/readyz");
    CHECK_FALSE(res);  // Refused: no client certificate.
  }
  httplib::Client plain("127.0.0.1", serve.port());
  auto res = plain.Get("/readyz");
  REQUIRE(res);
  CHECK(res->status == 400);
  CHECK(res->body == "Client sent an HTTP request to an HTTPS server.\n");
}
