// A group of pods through the verbs over HTTP: held at filter with the reason, planned whole, each
// member led to its slot (filter, prioritize), bound with its slot's GPUs, the bind event naming the
// domain; GET /api/v1/groups, explain and /metrics show it. A pod of no group beside it is placed as before.
#include <chrono>
#include <string>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/testing/prometheus_sample.h"
#include "extender/cluster/testing/builders.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {
using nlohmann::json;
using testing::GpuPod;
using testing::LiveServer;
using ::topofit::testing::SampleValue;

// Two blocks of two 8-GPU nodes (network.topology.nvidia.com/block).
k8s::Snapshot TwoBlocks() {
  k8s::Snapshot s;
  for (const char* b : {"b1", "b2"})
    for (int n = 1; n <= 2; ++n)
      s.nodes.push_back(cluster::testing::MakeNode(fmt::format("{}-n{}", b, n), 8, "hgx-h100-8",
                                                   {{"network.topology.nvidia.com/block", b}}));
  return s;
}

const char* kNames = R"(["b1-n1","b1-n2","b2-n1","b2-n2"])";
const char* kMember = R"({"topofit.io/group":"tr","topofit.io/group-size":"2","topofit.io/group-level":"block",
                          "topofit.io/group-policy":"required"})";

json Call(LiveServer& srv, const std::string& verb, const std::string& pod) {
  auto res = srv.Post("/scheduler/" + verb, R"({"Pod":)" + pod + R"(,"NodeNames":)" + kNames + "}");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  return json::parse(res->body);
}

TEST_CASE("group verbs: held with the reason, then each member led to its slot and bound with its GPUs") {
  LiveServer srv(ServeConfig{}, TwoBlocks());
  json held = Call(srv, "filter", GpuPod("a", 8, kMember));
  CHECK(held["NodeNames"].empty());
  REQUIRE(held["FailedAndUnresolvableNodes"].size() == 4);
  CHECK(held["FailedAndUnresolvableNodes"]["b1-n1"] == "group tr: 1 of 2 pods created");

  json b = Call(srv, "filter", GpuPod("b", 8, kMember));
  REQUIRE(b["NodeNames"].size() == 1);
  const std::string b_node = b["NodeNames"][0];
  json a = Call(srv, "filter", GpuPod("a", 8, kMember));
  REQUIRE(a["NodeNames"].size() == 1);
  const std::string a_node = a["NodeNames"][0];
  CHECK(a_node != b_node);
  CHECK(a_node.substr(0, 2) == b_node.substr(0, 2));  // one block
  CHECK(a["FailedAndUnresolvableNodes"] == json::object());  // Led to its slot: the rest left out.

  json scores = Call(srv, "prioritize", GpuPod("a", 8, kMember));
  for (const auto& s : scores) CHECK(s["Score"] == (s["Host"] == a_node ? 10 : 0));

  // A pod of no group beside them: the other block, as a single pod.
  json solo = Call(srv, "filter", GpuPod("solo", 8));
  CHECK(solo["NodeNames"].size() == 2);

  auto planned = srv.client->Get("/api/v1/groups");
  REQUIRE(planned);
  CHECK(json::parse(planned->body)["groups"][0]["state"] == "planned");

  for (const auto& [name, node] : std::vector<std::pair<std::string, std::string>>{{"a", a_node}, {"b", b_node}}) {
    auto res = srv.Post("/scheduler/bind", fmt::format(R"({{"PodName":"{}","PodNamespace":"t","PodUID":"uid-{}","Node":"{}"}})",
                                                       name, name, node));
    REQUIRE(res);
    CHECK(res->body == R"({"Error":""})");
  }
  auto& writer = dynamic_cast<k8s::InMemoryKubeWriter&>(srv.app->writer());
  // Their slots' nodes were among the nodes sent: nobody nominated (status.nominatedNodeName).
  CHECK(writer.Nominations().empty());
  CHECK(writer.Pods()["t/a"].annotations["topofit.io/gpu-ids"] == "0,1,2,3,4,5,6,7");
  CHECK(writer.Pods()["t/a"].node == a_node);
  auto events = writer.Events();
  REQUIRE(events.size() == 2);
  CHECK(events[0].message.find("a member of group tr (2 members), planned whole in block " + a_node.substr(0, 2)) !=
        std::string::npos);

  auto groups = srv.client->Get("/api/v1/groups");
  REQUIRE(groups);
  json g = json::parse(groups->body)["groups"];
  REQUIRE(g.size() == 1);
  CHECK(g[0]["name"] == "tr");
  CHECK(g[0]["namespace"] == "t");
  CHECK(g[0]["state"] == "bound");  // both binds written (no watch here to report them)
  CHECK(g[0]["membersSeen"] == 2);
  CHECK(g[0]["membersBound"] == 2);
  CHECK(g[0]["spec"]["level"] == "block");
  CHECK(g[0]["domain"] == "block " + a_node.substr(0, 2));

  auto metrics = srv.client->Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("topofit_groups{state=\"bound\"} 1") != std::string::npos);
  CHECK(metrics->body.find("topofit_group_time_to_place_seconds_count 1") != std::string::npos);
}

TEST_CASE("group verbs: explain of a member shows every block's room and why there is no plan") {
  LiveServer srv(ServeConfig{}, TwoBlocks());
  const std::string big = R"({"topofit.io/group":"big","topofit.io/group-size":"3","topofit.io/group-level":"block",
                              "topofit.io/group-policy":"required"})";
  for (const char* name : {"x", "y"}) (void)Call(srv, "filter", GpuPod(name, 8, big));
  json z = Call(srv, "filter", GpuPod("z", 8, big));
  CHECK(z["FailedAndUnresolvableNodes"]["b2-n2"] == "group big: no block can take 3 members of 8 GPUs: the best, b1, has room for 2");
  auto res = srv.client->Post("/api/v1/explain", GpuPod("x", 8, big), "application/json");
  REQUIRE(res);
  json e = json::parse(res->body);
  REQUIRE(e.contains("group"));
  CHECK(e["group"]["state"] == "waiting");
  CHECK(e["group"]["level"] == "block");
  REQUIRE(e["group"]["domains"].size() == 2);
  CHECK(e["group"]["domains"][0]["room"] == 2);
  CHECK(e["group"]["domains"][0]["fits"] == false);
  CHECK(e["group"]["reason"].get<std::string>().find("no block can take 3 members") != std::string::npos);
  CHECK(srv.app->model().Totals().reserved_gpus == 0);
}

TEST_CASE("group verbs: a group waiting for kube-scheduler's preemption names its victims, and /metrics counts it") {
  k8s::Snapshot snapshot = TwoBlocks();  // b1 held by two pods of priority 10, b2-n1 by one of 1000
  snapshot.pods.push_back(cluster::testing::MakePod("low-1", 8, "b1-n1", "0,1,2,3,4,5,6,7", 10));
  snapshot.pods.push_back(cluster::testing::MakePod("low-2", 8, "b1-n2", "0,1,2,3,4,5,6,7", 10));
  snapshot.pods.push_back(cluster::testing::MakePod("keeper", 8, "b2-n1", "0,1,2,3,4,5,6,7", 1000));
  LiveServer srv(ServeConfig{}, snapshot);
  auto urgent = [](const std::string& name) {
    std::string pod = GpuPod(name, 8, kMember);
    return pod.replace(pod.find(R"("spec":{)"), 8, R"("spec":{"priority":1000,)");
  };
  (void)Call(srv, "filter", urgent("a"));
  json b = Call(srv, "filter", urgent("b"));
  REQUIRE(b["NodeNames"].size() == 1);  // led to its slot in b1, for the preemption trial
  CHECK(b["NodeNames"][0].get<std::string>().starts_with("b1-"));
  auto groups = srv.client->Get("/api/v1/groups");
  REQUIRE(groups);
  json g = json::parse(groups->body)["groups"];
  REQUIRE(g.size() == 1);
  CHECK(g[0]["state"] == "waiting");
  CHECK(g[0]["preempting"] == json::array({"default/pod-low-1", "default/pod-low-2"}));
  auto metrics = srv.client->Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("topofit_groups{state=\"waiting\"} 1") != std::string::npos);
  CHECK(metrics->body.find("topofit_groups_preempting 1") != std::string::npos);
}

// Three blocks of two 8-GPU nodes; b3-n1 full (a pod of no group holds its 8 GPUs).
k8s::Snapshot ThreeBlocksOneFull() {
  k8s::Snapshot s;
  for (const char* b : {"b1", "b2", "b3"})
    for (int n = 1; n <= 2; ++n)
      s.nodes.push_back(cluster::testing::MakeNode(fmt::format("{}-n{}", b, n), 8, "hgx-h100-8",
                                                   {{"network.topology.nvidia.com/block", b}}));
  s.pods.push_back(cluster::testing::MakePod("full", 8, "b3-n1", "0,1,2,3,4,5,6,7"));
  return s;
}

TEST_CASE("group verbs: once a group was planned, a pod of no group keeps off the last block that fits one") {
  LiveServer srv(ServeConfig{}, ThreeBlocksOneFull());
  const char* names = R"(["b1-n1","b1-n2","b2-n1","b2-n2","b3-n1","b3-n2"])";
  auto call = [&](const std::string& verb, const std::string& pod) {
    auto res = srv.Post("/scheduler/" + verb, R"({"Pod":)" + pod + R"(,"NodeNames":)" + names + "}");
    REQUIRE(res);
    REQUIRE(res->status == 200);
    return json::parse(res->body);
  };
  auto best = [&](const std::string& pod) {
    std::vector<std::string> out;
    for (const auto& s : call("prioritize", pod))
      if (s["Score"] == 10) out.push_back(s["Host"]);
    return out;
  };
  // No group seen: the three whole nodes tie for a 1-GPU pod.
  CHECK(best(GpuPod("solo", 1)) == std::vector<std::string>{"b1-n1", "b1-n2", "b2-n1", "b2-n2", "b3-n2"});
  (void)call("filter", GpuPod("a", 8, kMember));
  json b = call("filter", GpuPod("b", 8, kMember));  // Planned: one of the two whole blocks.
  REQUIRE(b["NodeNames"].size() == 1);
  const std::string used = b["NodeNames"][0].get<std::string>().substr(0, 2);
  const std::string spare = used == "b1" ? "b2" : "b1";
  // Groups of 2 x 8 GPUs per block are expected now: the last block with room for one is kept whole,
  // and the pod goes to b3, broken already.
  CHECK(best(GpuPod("solo", 1)) == std::vector<std::string>{"b3-n2"});
  auto res = srv.client->Post("/api/v1/explain", GpuPod("solo", 1), "application/json");
  REQUIRE(res);
  json e = json::parse(res->body);
  CHECK(e["chosen"] == "b3-n2");
  int losses = 0;
  for (const auto& n : e["nodes"]) {
    if (!n.contains("bandLoss")) continue;
    ++losses;
    CHECK(n["bandLoss"]["plugin"] == "DomainFragmentation");
    CHECK(n["bandLoss"]["gpus"].get<double>() == doctest::Approx(n["node"].get<std::string>().starts_with(spare) ? 16.0 : 0.0));
  }
  CHECK(losses == 3);  // The band: b3-n2 and the spare block's two nodes.
}

TEST_CASE("group verbs: with scoring.domainLoss false a pod of no group is ordered by the tie-break rule alone") {
  ServeConfig config;
  config.domain_loss = false;
  LiveServer srv(config, ThreeBlocksOneFull());
  const std::string names = R"(["b1-n1","b1-n2","b2-n1","b2-n2","b3-n1","b3-n2"])";
  auto call = [&](const std::string& verb, const std::string& pod) {
    auto res = srv.Post("/scheduler/" + verb, R"({"Pod":)" + pod + R"(,"NodeNames":)" + names + "}");
    REQUIRE(res);
    return json::parse(res->body);
  };
  (void)call("filter", GpuPod("a", 8, kMember));
  REQUIRE(call("filter", GpuPod("b", 8, kMember))["NodeNames"].size() == 1);  // Planned.
  int best = 0;
  for (const auto& s : call("prioritize", GpuPod("solo", 1))) best += s["Score"] == 10;
  CHECK(best == 3);  // The spare block's two nodes and b3-n2, as before any group.
}

TEST_CASE("group verbs: /metrics gives the longest wait of a group waiting for members and of one waiting for room") {
  LiveServer srv(ServeConfig{}, TwoBlocks());
  const std::string room = R"(topofit_group_longest_wait_seconds{waiting_for="room"})";
  const std::string members = R"(topofit_group_longest_wait_seconds{waiting_for="members"})";
  auto metrics = srv.client->Get("/metrics");
  REQUIRE(metrics);
  CHECK(SampleValue(metrics->body, room) == 0);  // Nobody waits.
  CHECK(SampleValue(metrics->body, members) == 0);

  const std::string big = R"({"topofit.io/group":"big","topofit.io/group-size":"3","topofit.io/group-level":"block",
                              "topofit.io/group-policy":"required"})";
  for (const char* name : {"x", "y", "z"}) (void)Call(srv, "filter", GpuPod(name, 8, big));  // All there, no block fits.
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const std::string late = R"({"topofit.io/group":"late","topofit.io/group-size":"2"})";
  (void)Call(srv, "filter", GpuPod("l1", 8, late));  // 1 of 2 created.
  metrics = srv.client->Get("/metrics");
  REQUIRE(metrics);
  const double for_room = SampleValue(metrics->body, room), for_members = SampleValue(metrics->body, members);
  CHECK(for_room >= 0.06);        // big, complete, since its first member: at least the sleep.
  CHECK(for_members >= 0);
  CHECK(for_members < for_room);  // late's first member came after the sleep.
  CHECK(metrics->body.find("topofit_groups{state=\"waiting\"} 2") != std::string::npos);
}

}  // namespace
}  // namespace topofit::server
