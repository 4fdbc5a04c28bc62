// The bind path's writes against a local FakeApiServer.
#include "extender/apiclient/api_writer.h"

#include <doctest/doctest.h>

#include "extender/apiclient/testing/fake_apiserver.h"

namespace topofit::apiclient {
namespace {

using testing::FakeApiServer;

std::unique_ptr<ApiClient> ClientFor(const FakeApiServer& server) {
  ClusterConfig cfg;
  REQUIRE(ParseServerUrl(server.url(), &cfg).ok());
  cfg.ca_pem = testing::GetTestPki().ca_pem;
  cfg.token = "t";
  auto api = ApiClient::Create(cfg);
  REQUIRE(api.ok());
  return std::move(*api);
}

TEST_CASE("api writer: annotate then bind") {
  FakeApiServer server;
  server.SetTokens({"t"});
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  k8s::KubeWriter& w = writer;  // Used through E2's interface.
  REQUIRE(w.PatchPodAnnotation("ml", "train", "topofit.io/gpu-ids", "0,1,2,3").ok());
  Status bound = w.Bind("ml", "train", "uid-1", "node-a");
  REQUIRE_MESSAGE(bound.ok(), bound.error());
  auto pod = server.Get("pods", "ml/train");
  CHECK(pod["metadata"]["annotations"]["topofit.io/gpu-ids"] == "0,1,2,3");
  CHECK(pod["spec"]["nodeName"] == "node-a");
}

TEST_CASE("api writer: a retried bind to the same node succeeds, to another node it fails with the API message") {
  FakeApiServer server;
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4, "node-a"));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  CHECK(writer.Bind("ml", "train", "uid-1", "node-a").ok());
  Status other = writer.Bind("ml", "train", "uid-1", "node-b");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().find("is already assigned to node \"node-a\"") != std::string::npos);
  // A re-created pod of the same name bound to node-a is not "ours": the uid differs.
  CHECK_FALSE(writer.Bind("ml", "train", "uid-OLD", "node-a").ok());
}

TEST_CASE("api writer: failures carry the API server's Status message") {
  FakeApiServer server;
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  server.FailNextBinding(500, "etcdserver: request timed out");
  Status s = writer.Bind("ml", "train", "uid-1", "node-a");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("500: etcdserver: request timed out") != std::string::npos);

  Status missing = writer.PatchPodAnnotation("ml", "ghost", "topofit.io/gpu-ids", "0");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("404: pods \"ghost\" not found") != std::string::npos);
}

}  // namespace
}  // namespace topofit::apiclient
