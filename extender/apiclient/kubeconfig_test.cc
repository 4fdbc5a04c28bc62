#include "extender/apiclient/kubeconfig.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "extender/apiclient/testing/test_pki.h"

namespace topofit::apiclient {
namespace {

using testing::Base64;
using testing::WriteTempFile;

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: )";

std::string TwoContexts() {
  return std::string(kTwoContexts) + Base64("PROD-CA") + R"(
- name: dev-cluster
  cluster:
    server: https://dev.example.com/k8s/clusters/c-1/
    certificate-authority: certs/dev-ca.pem
    tls-server-name: api.dev.internal
- name: lab
  cluster:
    server: https://[fd00::1]:8443
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin}
- name: dev
  context: {cluster: dev-cluster, user: robot}
- name: lab
  context: {cluster: lab, user: anon-free}
users:
- name: admin
  user:
    client-certificate-data: )" + Base64("CERT") + R"(
    client-key-data: )" + Base64("KEY") + R"(
    token: static-token
- name: robot
  user:
    tokenFile: secrets/token
- name: anon-free
  user: {}
)";
}

TEST_CASE("kubeconfig: current-context picks cluster, CA data, client certificate and token") {
  auto cfg = ParseKubeconfig(TwoContexts(), "/etc/kube");
  REQUIRE_MESSAGE(cfg.ok(), cfg.error());
  CHECK(cfg->context == "prod");
  CHECK(cfg->host == "10.0.0.1");
  CHECK(cfg->port == 6443);
  CHECK(cfg->path_prefix.empty());
  CHECK(cfg->ca_pem == "PROD-CA");
  CHECK(cfg->client_cert_pem == "CERT");
  CHECK(cfg->client_key_pem == "KEY");
  CHECK(cfg->token == "static-token");
  CHECK_FALSE(cfg->insecure_skip_tls_verify);
}

TEST_CASE("kubeconfig: an explicit context, CA file relative to the kubeconfig, token file, path prefix") {
  std::string ca = WriteTempFile("dev-ca.pem", "DEV-CA");
  std::string dir = ca.substr(0, ca.rfind('/'));
  auto missing = ParseKubeconfig(TwoContexts(), dir, "dev");
  REQUIRE_FALSE(missing.ok());  // certs/dev-ca.pem is not there: the error names the file.
  CHECK(missing.error().find("certs/dev-ca.pem") != std::string::npos);

  std::string yaml = TwoContexts();
  yaml.replace(yaml.find("certs/dev-ca.pem"), 16, "dev-ca.pem");
  std::string kubeconfig = WriteTempFile("kc-dev.yaml", yaml);
  auto dev = LoadKubeconfig(kubeconfig, "dev");
  REQUIRE_MESSAGE(dev.ok(), dev.error());
  CHECK(dev->host == "dev.example.com");
  CHECK(dev->port == 443);
  CHECK(dev->path_prefix == "/k8s/clusters/c-1");
  CHECK(dev->ca_pem == "DEV-CA");
  CHECK(dev->tls_server_name == "api.dev.internal");
  CHECK(dev->token_file == dir + "/secrets/token");
  CHECK(dev->token.empty());
  CHECK(dev->client_cert_pem.empty());
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify only when written, IPv6 server") {
  auto cfg = ParseKubeconfig(TwoContexts(), "/x", "lab");
  REQUIRE_MESSAGE(cfg.ok(), cfg.error());
  CHECK(cfg->insecure_skip_tls_verify);
  CHECK(cfg->host == "fd00::1");
  CHECK(cfg->port == 8443);
}

TEST_CASE("kubeconfig: client certificate and key from files") {
  std::string cert = WriteTempFile("client.crt", "CERTFILE");
  std::string key = WriteTempFile("client.key", "KEYFILE");
  std::string yaml = testing::KubeconfigYaml("https://127.0.0.1:6443", "CA",
                                             "    client-certificate: " + cert + "\n    client-key: " + key + "\n");
  auto cfg = ParseKubeconfig(yaml, "/nowhere");
  REQUIRE_MESSAGE(cfg.ok(), cfg.error());
  CHECK(cfg->client_cert_pem == "CERTFILE");
  CHECK(cfg->client_key_pem == "KEYFILE");
  CHECK(cfg->ca_pem == "CA");
}

TEST_CASE("kubeconfig: errors name what is wrong") {
  auto missing_ctx = ParseKubeconfig(TwoContexts(), "/x", "nope");
  REQUIRE_FALSE(missing_ctx.ok());
  CHECK(missing_ctx.error().find("'nope'") != std::string::npos);

  auto http = ParseKubeconfig(testing::KubeconfigYaml("http://127.0.0.1:8080", "CA", "    token: t\n"), "/x");
  REQUIRE_FALSE(http.ok());
  CHECK(http.error().find("only https") != std::string::npos);

  auto exec = ParseKubeconfig(
      testing::KubeconfigYaml("https://127.0.0.1", "CA", "    exec:\n      command: aws\n"), "/x");
  REQUIRE_FALSE(exec.ok());
  CHECK(exec.error().find("exec") != std::string::npos);

  auto half = ParseKubeconfig(
      testing::KubeconfigYaml("https://127.0.0.1", "CA", "    client-certificate-data: " + Base64("C") + "\n"), "/x");
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().find("together") != std::string::npos);

  CHECK_FALSE(ParseKubeconfig("[not, a, map]", "/x").ok());
  CHECK_FALSE(ParseKubeconfig("a: [unclosed", "/x").ok());
  CHECK_FALSE(LoadKubeconfig("/nonexistent/kubeconfig").ok());
}

TEST_CASE("kubeconfig: an alias bomb is refused in milliseconds, not expanded") {
  // Nine levels of nine aliases each (9^9 strings once expanded), under the users a context names.
  std::string bomb = "a0: &a0 [lol]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) bomb += (j ? ",*a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  bomb += TwoContexts().substr(TwoContexts().find("current-context"));
  auto start = std::chrono::steady_clock::now();
  auto parsed = ParseKubeconfig(bomb, "/x");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().find("kubeconfig: ") == 0);
  CHECK(parsed.error().find("aliases expand the document by more than 100000 nodes") != std::string::npos);
  // Aliases within the bound still work: kubeconfigs do not use them, but YAML allows them.
  CHECK(ParseKubeconfig("anchors: &x {a: 1}\ncopy: *x\n" + TwoContexts().substr(TwoContexts().find("current-context")),
                        "/x").ok());
}

TEST_CASE("server URL parsing") {
  ClusterConfig c;
  REQUIRE(ParseServerUrl("https://api:6443/", &c).ok());
  CHECK(c.host == "api");
  CHECK(c.port == 6443);
  CHECK(c.path_prefix.empty());
  CHECK_FALSE(ParseServerUrl("https://api:99999", &c).ok());
  CHECK_FALSE(ParseServerUrl("https://:443", &c).ok());
  CHECK_FALSE(ParseServerUrl("https://api:12ab", &c).ok());
}

TEST_CASE("in-cluster: service host and port from the environment, CA and token file from the mount") {
  std::string ca = WriteTempFile("ca.crt", "SA-CA");
  std::string dir = ca.substr(0, ca.rfind('/'));
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto cfg = InClusterConfig(dir);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  REQUIRE_MESSAGE(cfg.ok(), cfg.error());
  CHECK(cfg->host == "10.96.0.1");
  CHECK(cfg->port == 443);
  CHECK(cfg->ca_pem == "SA-CA");
  CHECK(cfg->token_file == dir + "/token");
  CHECK_FALSE(InClusterConfig(dir).ok());  // Environment gone.
}

}  // namespace
}  // namespace topofit::apiclient
