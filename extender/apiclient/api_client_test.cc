// HTTPS against a local FakeApiServer: verification, client certificates, bearer tokens, rotation.
#include "extender/apiclient/api_client.h"

#include <doctest/doctest.h>

#include "extender/apiclient/testing/fake_apiserver.h"

namespace topofit::apiclient {
namespace {

using testing::FakeApiServer;
using testing::GetTestPki;

ClusterConfig ConfigFor(const FakeApiServer& server, const std::string& ca_pem) {
  ClusterConfig cfg;
  REQUIRE(ParseServerUrl(server.url(), &cfg).ok());
  cfg.server = server.url();
  cfg.ca_pem = ca_pem;
  return cfg;
}

ApiClientOptions Fast() {
  ApiClientOptions o;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.request_timeout = std::chrono::milliseconds(2000);
  return o;
}

TEST_CASE("api client: verifies the server against the configured CA and its IP SAN") {
  FakeApiServer server;
  server.Put("nodes", testing::NodeJson("n1", 8));
  auto api = ApiClient::Create(ConfigFor(server, GetTestPki().ca_pem), Fast());
  REQUIRE_MESSAGE(api.ok(), api.error());
  auto res = (*api)->Do("GET", "/api/v1/nodes");
  REQUIRE_MESSAGE(res.ok(), res.error());
  CHECK(res->status == 200);
  CHECK(res->body.find("\"n1\"") != std::string::npos);
  // The pool reuses the connection; a second call works too.
  CHECK((*api)->Do("GET", "/api/v1/nodes").ok());
}

TEST_CASE("api client: an untrusted CA, a wrong name, or no CA at all fail the handshake") {
  FakeApiServer server;
  auto other = ApiClient::Create(ConfigFor(server, GetTestPki().other_ca_pem), Fast());
  REQUIRE(other.ok());
  CHECK_FALSE((*other)->Do("GET", "/api/v1/nodes").ok());

  ClusterConfig wrong_name = ConfigFor(server, GetTestPki().ca_pem);
  wrong_name.tls_server_name = "elsewhere.test";  // The server's cert does not name it.
  auto named = ApiClient::Create(wrong_name, Fast());
  REQUIRE(named.ok());
  CHECK_FALSE((*named)->Do("GET", "/api/v1/nodes").ok());

  auto system_store = ApiClient::Create(ConfigFor(server, ""), Fast());  // No insecure default.
  REQUIRE(system_store.ok());
  CHECK_FALSE((*system_store)->Do("GET", "/api/v1/nodes").ok());

  ClusterConfig insecure = ConfigFor(server, "");
  insecure.insecure_skip_tls_verify = true;  // Only because the kubeconfig said so.
  auto skip = ApiClient::Create(insecure, Fast());
  REQUIRE(skip.ok());
  CHECK((*skip)->Do("GET", "/api/v1/nodes").ok());
}

TEST_CASE("api client: malformed PEM is a start-up error") {
  ClusterConfig cfg;
  REQUIRE(ParseServerUrl("https://127.0.0.1:1", &cfg).ok());
  cfg.ca_pem = "not a certificate";
  CHECK_FALSE(ApiClient::Create(cfg).ok());
  cfg.ca_pem = GetTestPki().ca_pem;
  cfg.client_cert_pem = GetTestPki().client_cert_pem;
  cfg.client_key_pem = GetTestPki().server_key_pem;  // Not the certificate's key.
  auto mismatch = ApiClient::Create(cfg);
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().find("does not match") != std::string::npos);
}

TEST_CASE("api client: client certificate authentication") {
  FakeApiServer server(/*require_client_cert=*/true);
  auto anonymous = ApiClient::Create(ConfigFor(server, GetTestPki().ca_pem), Fast());
  REQUIRE(anonymous.ok());
  CHECK_FALSE((*anonymous)->Do("GET", "/api/v1/nodes").ok());

  ClusterConfig cfg = ConfigFor(server, GetTestPki().ca_pem);
  cfg.client_cert_pem = GetTestPki().client_cert_pem;
  cfg.client_key_pem = GetTestPki().client_key_pem;
  auto api = ApiClient::Create(cfg, Fast());
  REQUIRE_MESSAGE(api.ok(), api.error());
  auto res = (*api)->Do("GET", "/api/v1/nodes");
  REQUIRE_MESSAGE(res.ok(), res.error());
  CHECK(res->status == 200);
}

TEST_CASE("api client: a rotated token file is re-read on 401 and the request retried") {
  FakeApiServer server;
  server.SetTokens({"token-1"});
  std::string file = testing::WriteTempFile("rotating-token", "token-1\n");
  ClusterConfig cfg = ConfigFor(server, GetTestPki().ca_pem);
  cfg.token_file = file;
  auto api = ApiClient::Create(cfg, Fast());
  REQUIRE(api.ok());
  CHECK((*api)->Do("GET", "/api/v1/nodes")->status == 200);

  server.SetTokens({"token-2"});
  testing::WriteTempFile("rotating-token", "token-2");
  auto res = (*api)->Do("GET", "/api/v1/nodes");
  REQUIRE(res.ok());
  CHECK(res->status == 200);
  CHECK(server.unauthorized() == 1);

  server.SetTokens({"token-3"});  // Not in the file: the 401 comes back with the server's message.
  auto denied = (*api)->Do("GET", "/api/v1/nodes");
  REQUIRE(denied.ok());
  CHECK(denied->status == 401);
  CHECK(ApiErrorMessage(*denied) == "401: Unauthorized");
}

TEST_CASE("api client: connection refused is an Error, bounded by the connect timeout") {
  ClusterConfig cfg;
  REQUIRE(ParseServerUrl("https://127.0.0.1:1", &cfg).ok());
  cfg.ca_pem = GetTestPki().ca_pem;
  auto api = ApiClient::Create(cfg, Fast());
  REQUIRE(api.ok());
  auto res = (*api)->Do("GET", "/api/v1/nodes");
  CHECK_FALSE(res.ok());
}

TEST_CASE("UrlEncode and ApiErrorMessage") {
  CHECK(UrlEncode("status.phase!=Succeeded,x") == "status.phase%21%3DSucceeded%2Cx");
  CHECK(ApiErrorMessage({409, R"({"kind":"Status","message":"already bound","code":409})"}) == "409: already bound");
  CHECK(ApiErrorMessage({502, "bad gateway"}) == "502: bad gateway");
  CHECK(ApiErrorMessage({500, ""}) == "500: no message");
}

}  // namespace
}  // namespace topofit::apiclient
