// The bind path's writes against a local FakeApiServer.
#include "extender/apiclient/api_writer.h"

#include <doctest/doctest.h>

#include "extender/apiclient/testing/fake_apiserver.h"
#include "extender/k8s/objects.h"

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

TEST_CASE("api writer: one write binds the pod and sets its annotations") {
  FakeApiServer server;
  server.SetTokens({"t"});
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  k8s::KubeWriter& w = writer;  // Used through the server's interface.
  Status bound = w.Bind("ml", "train", "uid-1", "node-a", {{"topofit.io/gpu-ids", "0,1,2,3"}});
  REQUIRE_MESSAGE(bound.ok(), bound.error());
  auto pod = server.Get("pods", "ml/train");
  CHECK(pod["metadata"]["annotations"]["topofit.io/gpu-ids"] == "0,1,2,3");
  CHECK(pod["spec"]["nodeName"] == "node-a");
  CHECK(server.bindings() == 1);
  CHECK(server.pod_patches() == 0);
}

TEST_CASE("api writer: a failed bind leaves the pod neither bound nor annotated") {
  FakeApiServer server;
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  server.FailNextBinding(500, "etcdserver: request timed out");
  REQUIRE_FALSE(writer.Bind("ml", "train", "uid-1", "node-a", {{"topofit.io/gpu-ids", "0,1"}}).ok());
  auto pod = server.Get("pods", "ml/train");
  CHECK_FALSE(pod["spec"].contains("nodeName"));
  CHECK_FALSE(pod["metadata"].contains("annotations"));
  // A re-created pod (another uid) is refused by the uid precondition, unannotated.
  Status stale = writer.Bind("ml", "train", "uid-OLD", "node-a", {{"topofit.io/gpu-ids", "0,1"}});
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().find("Precondition failed: UID in precondition") != std::string::npos);
  CHECK_FALSE(server.Get("pods", "ml/train")["metadata"].contains("annotations"));
}

TEST_CASE("api writer: a retried bind to the same node succeeds, to another node it fails with the API message") {
  FakeApiServer server;
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4, "node-a", "0,1,2,3"));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  CHECK(writer.Bind("ml", "train", "uid-1", "node-a", {{"topofit.io/gpu-ids", "0,1,2,3"}}).ok());
  Status other = writer.Bind("ml", "train", "uid-1", "node-b", {{"topofit.io/gpu-ids", "0,1,2,3"}});
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().find("is already assigned to node \"node-a\"") != std::string::npos);
  // A re-created pod of the same name bound to node-a is not "ours": the uid differs.
  CHECK_FALSE(writer.Bind("ml", "train", "uid-OLD", "node-a", {{"topofit.io/gpu-ids", "0,1,2,3"}}).ok());
  // Nor is the pod bound there with other GPUs (another binder's work).
  CHECK_FALSE(writer.Bind("ml", "train", "uid-1", "node-a", {{"topofit.io/gpu-ids", "4,5"}}).ok());
}

TEST_CASE("api writer: failures carry the API server's Status message") {
  FakeApiServer server;
  server.Put("pods", testing::PodJson("ml", "train", "uid-1", 4));
  auto api = ClientFor(server);
  ApiWriter writer(*api);
  server.FailNextBinding(500, "etcdserver: request timed out");
  Status s = writer.Bind("ml", "train", "uid-1", "node-a", {});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("500: etcdserver: request timed out") != std::string::npos);

  Status missing = writer.Bind("ml", "ghost", "uid-9", "node-a", {{"topofit.io/gpu-ids", "0"}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("404: pods \"ghost\" not found") != std::string::npos);
}

TEST_CASE("api writer: requeue patches the pod's topofit.io/requeued-at, guarded by its uid") {
  FakeApiServer server;
  server.SetTokens({"t"});
  server.Put("pods", testing::PodJson("ml", "wait", "uid-1", 2));
  auto api = ClientFor(server);
  {
    ApiWriter writer(*api);
    writer.RequeuePod("ml", "wait", "uid-1");
    writer.RequeuePod("ml", "wait", "uid-of-an-older-pod");  // 409: logged, the pod is left alone.
    writer.RequeuePod("ml", "gone", "uid-2");                // 404: logged.
  }  // The writer makes what it queued before it goes.
  auto pod = server.Get("pods", "ml/wait");
  std::string at = pod["metadata"]["annotations"].value(k8s::kRequeuedAtAnnotation, "");
  CHECK(at.size() == 20);  // 2026-11-23T10:00:00Z
  CHECK(at.back() == 'Z');
  CHECK(pod["metadata"]["uid"] == "uid-1");
  CHECK(pod["spec"].value("nodeName", "") == "");
  CHECK(server.pod_patches() == 3);
}

}  // namespace
}  // namespace topofit::apiclient
