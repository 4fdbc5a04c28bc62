// PodGroup members through the verbs over HTTP, as `topofit serve --snapshot` runs them: the snapshot's
// Workload API and coscheduling PodGroups found by the serve app's lookup, a member of an unknown
// PodGroup held with the reason, gangs planned whole (the Workload PodGroup's topology key as its
// level), an annotation group beside them.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "extender/cluster/testing/builders.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {
using nlohmann::json;
using testing::LiveServer;

constexpr const char* kBlockLabel = "network.topology.nvidia.com/block";

// Three blocks (r1..r3) of two 8-GPU nodes, and the PodGroups of namespace t.
k8s::Snapshot Racks() {
  k8s::Snapshot s;
  for (int r = 1; r <= 3; ++r)
    for (int n = 1; n <= 2; ++n)
      s.nodes.push_back(cluster::testing::MakeNode(fmt::format("r{}-n{}", r, n), 8, "hgx-h100-8",
                                                   {{kBlockLabel, fmt::format("r{}", r)}}));
  k8s::PodGroupObject gang;
  gang.namespace_ = "t";
  gang.name = "train";
  gang.min_count = 2;
  gang.topology_key = kBlockLabel;
  s.pod_groups.push_back(gang);
  k8s::PodGroupObject ray = gang;
  ray.api = k8s::PodGroupObject::Api::kCoscheduling;
  ray.name = "ray";
  ray.topology_key.clear();
  s.pod_groups.push_back(ray);
  return s;
}

// A pod of 8 GPUs; `spec` and `labels` are JSON members added to its spec and metadata.
std::string Pod(const std::string& name, const std::string& spec, const std::string& labels = "{}",
                const std::string& annotations = "{}") {
  return fmt::format(R"({{"metadata":{{"name":"{0}","namespace":"t","uid":"uid-{0}","labels":{1},"annotations":{2}}},
    "spec":{{{3}"containers":[{{"name":"c","resources":{{"limits":{{"nvidia.com/gpu":"8"}}}}}}]}}}})",
                     name, labels, annotations, spec);
}

std::string WorkloadMember(const std::string& name, const std::string& group) {
  return Pod(name, fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}},)", group));
}

json Filter(LiveServer& srv, const std::string& pod) {
  auto res = srv.Post("/scheduler/filter",
                      R"({"Pod":)" + pod + R"(,"NodeNames":["r1-n1","r1-n2","r2-n1","r2-n2","r3-n1","r3-n2"]})");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  return json::parse(res->body);
}

std::string OnlyNode(const json& reply) {
  REQUIRE(reply["NodeNames"].size() == 1);
  return reply["NodeNames"][0];
}

}  // namespace

TEST_CASE("podgroup verbs: Workload API and coscheduling gangs from a snapshot, beside an annotation group") {
  LiveServer srv(ServeConfig{}, Racks());
  json unknown = Filter(srv, WorkloadMember("x-0", "missing"));
  CHECK(unknown["NodeNames"].empty());
  CHECK(unknown["FailedAndUnresolvableNodes"]["r1-n1"] == "group missing: PodGroup t/missing not found yet");

  CHECK(Filter(srv, WorkloadMember("w-0", "train"))["FailedAndUnresolvableNodes"]["r1-n1"] ==
        "group train: 1 of 2 pods created");
  const std::string w1 = OnlyNode(Filter(srv, WorkloadMember("w-1", "train")));
  const std::string w0 = OnlyNode(Filter(srv, WorkloadMember("w-0", "train")));
  CHECK(w0 != w1);
  CHECK(w0.substr(0, 2) == w1.substr(0, 2));  // One block: the PodGroup's topology key, required.

  const std::string ray_label = R"({"scheduling.x-k8s.io/pod-group":"ray"})";
  CHECK(Filter(srv, Pod("r-0", "", ray_label))["FailedAndUnresolvableNodes"]["r1-n1"] ==
        "group ray: 1 of 2 pods created");
  OnlyNode(Filter(srv, Pod("r-1", "", ray_label)));
  OnlyNode(Filter(srv, Pod("r-0", "", ray_label)));

  const std::string mine = R"({"topofit.io/group":"mine","topofit.io/group-size":"2"})";
  CHECK(Filter(srv, Pod("a-0", "", "{}", mine))["FailedAndUnresolvableNodes"]["r1-n1"] ==
        "group mine: 1 of 2 pods created");
  OnlyNode(Filter(srv, Pod("a-1", "", "{}", mine)));
  OnlyNode(Filter(srv, Pod("a-0", "", "{}", mine)));

  auto groups = srv.client->Get("/api/v1/groups");
  REQUIRE(groups);
  const json listed = json::parse(groups->body);
  std::map<std::string, std::string> state;
  for (const auto& g : listed["groups"]) {
    state[g["namespace"].get<std::string>() + "/" + g["name"].get<std::string>()] = g["state"].get<std::string>();
  }
  CHECK(state["t/train"] == "planned");
  CHECK(state["t/ray"] == "planned");
  CHECK(state["t/mine"] == "planned");
  CHECK(state["t/missing"] == "waiting");
}

}  // namespace topofit::server
