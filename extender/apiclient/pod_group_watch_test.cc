// PodGroupWatch against a local HTTPS FakeApiServer: PodGroups of both APIs into the store, changes and
// deletions followed, and a missing API (404: the CRD not installed) logged once, not breaking the
// other, and picked up when it is served.
#include "extender/apiclient/pod_group_watch.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>

#include "extender/apiclient/testing/fake_apiserver.h"
#include "extender/apiclient/testing/recording_sink.h"
#include "extender/apiclient/testing/test_pki.h"

namespace topofit::apiclient {
namespace {

using testing::FakeApiServer;
using testing::WaitFor;
using Api = k8s::PodGroupObject::Api;

nlohmann::json WorkloadPodGroup(const std::string& name, int min_count) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}}}};
}

struct Fixture {
  FakeApiServer server;
  cluster::PodGroupStore store;
  std::vector<std::string> logs;
  std::mutex logs_mu;

  LiveOptions Options() {
    LiveOptions o;
    o.kubeconfig = testing::WriteTempFile("podgroups.kubeconfig",
                                          testing::KubeconfigYaml(server.url(), testing::GetTestPki().ca_pem, "    token: t\n"));
    o.watch.backoff_initial = std::chrono::milliseconds(20);
    o.watch.backoff_max = std::chrono::milliseconds(200);
    o.watch.watch_timeout_min = std::chrono::seconds(1);
    o.watch.read_slack = std::chrono::milliseconds(2000);
    o.api.request_timeout = std::chrono::milliseconds(2000);
    o.log = [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(logs_mu);
      logs.push_back(m);
    };
    return o;
  }
  int Logged(const std::string& part) {
    std::lock_guard<std::mutex> lock(logs_mu);
    return static_cast<int>(std::count_if(logs.begin(), logs.end(),
                                          [&](const std::string& l) { return l.find(part) != std::string::npos; }));
  }
};

}  // namespace

TEST_CASE("podgroup watch: Workload PodGroups listed and watched, and the missing coscheduling CRD logged once") {
  Fixture f;
  f.server.Put(FakeApiServer::kWorkloadPodGroups, WorkloadPodGroup("train", 4));
  auto api = ConnectApi(f.Options());
  REQUIRE(api.ok());
  PodGroupWatch watch(**api, f.store, f.Options(), std::chrono::milliseconds(100));
  REQUIRE(WaitFor([&] { return f.store.Find(Api::kWorkload, "ml", "train").has_value(); }));
  CHECK(f.store.Find(Api::kWorkload, "ml", "train")->min_count == 4);
  f.server.Put(FakeApiServer::kWorkloadPodGroups, WorkloadPodGroup("train", 6));
  f.server.Put(FakeApiServer::kWorkloadPodGroups, WorkloadPodGroup("eval", 2));
  REQUIRE(WaitFor([&] {
    auto g = f.store.Find(Api::kWorkload, "ml", "train");
    return g && g->min_count == 6 && f.store.Find(Api::kWorkload, "ml", "eval");
  }));
  f.server.Delete(FakeApiServer::kWorkloadPodGroups, "ml/eval");
  REQUIRE(WaitFor([&] { return !f.store.Find(Api::kWorkload, "ml", "eval"); }));
  nlohmann::json bad = WorkloadPodGroup("bad", 1);
  bad["spec"]["schedulingPolicy"] = nlohmann::json::object();
  f.server.Put(FakeApiServer::kWorkloadPodGroups, bad);
  REQUIRE(WaitFor([&] { return f.Logged("podgroup skipped: podgroup ml/bad: spec.schedulingPolicy") == 1; }));

  REQUIRE(WaitFor([&] { return f.server.lists(FakeApiServer::kCoschedulingPodGroups) >= 3; }));
  CHECK(watch.coscheduling().absent());
  CHECK_FALSE(watch.workload().absent());
  CHECK(f.Logged("/apis/scheduling.x-k8s.io/v1alpha1/podgroups is not served (404") == 1);  // once, not per try
  CHECK(f.Logged("list failed") == 0);
  CHECK(f.store.size() == 1);
}

TEST_CASE("podgroup watch: a CRD installed later is picked up at the next try") {
  Fixture f;
  auto api = ConnectApi(f.Options());
  REQUIRE(api.ok());
  PodGroupWatch watch(**api, f.store, f.Options(), std::chrono::milliseconds(100));
  REQUIRE(WaitFor([&] { return watch.coscheduling().absent(); }));
  f.server.ServeCoschedulingPodGroups();
  f.server.Put(FakeApiServer::kCoschedulingPodGroups,
               {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "ray"}, {"namespace", "ml"}}},
                {"spec", {{"minMember", 3}}}});
  REQUIRE(WaitFor([&] { return f.store.Find(Api::kCoscheduling, "ml", "ray").has_value(); }));
  CHECK(f.store.Find(Api::kCoscheduling, "ml", "ray")->min_count == 3);
  // The list's items reach the store while it streams; absent() turns false once the list has
  // ended (reflector.h), a moment later - seen under ASan at -O0.
  CHECK(WaitFor([&] { return !watch.coscheduling().absent(); }));
  CHECK(f.Logged("served now") == 1);
}

}  // namespace topofit::apiclient
