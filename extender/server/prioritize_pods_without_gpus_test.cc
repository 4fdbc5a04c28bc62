// POST <prefix>/prioritize-pods-without-gpus over the server's real HTTP path: the verb of the second
// extender entry (no managedResources) that kube-scheduler calls for every pod of the profile.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "extender/k8s/object_decoder.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
using nlohmann::json;
using testing::GpuPod;
using testing::kDemoNames;
using testing::LiveServer;

namespace {

constexpr const char* kVerb = "/scheduler/prioritize-pods-without-gpus";

std::string NodeJson(const std::string& name, int cores, int mem_gib) {
  return fmt::format(R"({{"metadata":{{"name":"{}","annotations":{{"topofit.io/gpu-topology":"pcie-8-dual-socket"}}}},)"
                     R"("status":{{"allocatable":{{"nvidia.com/gpu":"8","cpu":"{}","memory":"{}Gi","pods":"110"}}}}}})",
                     name, cores, mem_gib);
}

// A pod requesting `gpus` GPUs (limits) and cores / memory (requests).
std::string PodJson(const std::string& name, int gpus, int cores, int mem_gib) {
  std::string limits = gpus ? fmt::format(R"("limits":{{"nvidia.com/gpu":"{}"}},)", gpus) : "";
  return fmt::format(R"({{"metadata":{{"name":"{0}","namespace":"t","uid":"uid-{0}"}},"spec":{{"containers":[{{"name":"c",)"
                     R"("resources":{{{1}"requests":{{"cpu":"{2}","memory":"{3}Gi"}}}}}}]}},"status":{{}}}})",
                     name, limits, cores, mem_gib);
}

std::string Args(const std::string& pod, const std::string& names) {
  return R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + names + "}";
}

std::map<std::string, int> ScoresOf(const std::string& body) {
  std::map<std::string, int> out;
  for (const auto& hp : json::parse(body)) out[hp["Host"].get<std::string>()] = hp["Score"].get<int>();
  return out;
}

// Two empty 8-GPU nodes: "small" has 64 cores, "big" 128 (memory in proportion, so kube-scheduler's
// MostAllocated would put a CPU pod on small), and "cpu-node" without GPUs. The workload seen: 8-GPU
// pods that need 60 cores.
k8s::Snapshot HandMadeCluster() {
  k8s::Snapshot snap;
  const std::string cpu_node = R"({"metadata":{"name":"cpu-node"},"status":{"allocatable":{"cpu":"32","memory":"128Gi"}}})";
  for (const auto& n : {NodeJson("small", 64, 256), NodeJson("big", 128, 512), cpu_node}) {
    auto node = k8s::DecodeNode(n);
    REQUIRE(node);
    snap.nodes.push_back(std::move(*node));
  }
  return snap;
}

struct HandMade : LiveServer {
  explicit HandMade(ServeConfig cfg = {}) : LiveServer(std::move(cfg), HandMadeCluster()) {}
};

const std::string kNames = R"(["small","big"])";

}  // namespace

TEST_CASE("prioritize-pods-without-gpus: a CPU-only pod goes where it leaves the 8-GPU pods their cores") {
  HandMade srv;
  for (int i = 0; i < 3; ++i) {  // topofit learns the workload from the GPU pods' filter calls.
    auto f = srv.Post("/scheduler/filter", Args(PodJson("eight-" + std::to_string(i), 8, 60, 128), kNames));
    REQUIRE(f);
    REQUIRE(f->status == 200);
  }
  REQUIRE(srv.app->pipeline().workload().Snapshot()->observed == 3);

  // 8 cores on small leave 56 < 60: its 8 free GPUs are lost to the 8-GPU pods. On big 120 remain;
  // a node without GPUs loses none. big and cpu-node tie on the score; the tie-break (fit-then-pack,
  // tie_break.h) ranks first the node with no free GPU, so cpu-node keeps the 10.
  const std::string cpu_pod = Args(PodJson("cpu", 0, 8, 32), kNames);
  auto res = srv.Post(kVerb, Args(PodJson("cpu", 0, 8, 32), R"(["small","big","cpu-node"])"));
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(ScoresOf(res->body) == std::map<std::string, int>{{"big", 5}, {"cpu-node", 10}, {"small", 0}});
  CHECK(res->body.find(".0") == std::string::npos);
  // Pods without GPUs are not part of the workload estimate, and nothing is held for them.
  CHECK(srv.app->pipeline().workload().Snapshot()->observed == 3);
  CHECK(srv.app->model().pending().Get("uid-cpu") == std::nullopt);

  // The plain prioritize verb keeps scoring.podsWithoutGpus' meaning: off by default, 0 everywhere.
  auto plain = srv.Post("/scheduler/prioritize", cpu_pod);
  REQUIRE(plain);
  CHECK(ScoresOf(plain->body) == std::map<std::string, int>{{"big", 0}, {"small", 0}});

  const std::string metrics = srv.client->Get("/metrics")->body;
  CHECK(metrics.find(R"(topofit_requests_total{verb="prioritize-pods-without-gpus"} 1)") != std::string::npos);
  CHECK(metrics.find(R"(topofit_decisions_total{verb="prioritize-pods-without-gpus",outcome="scored"} 3)") !=
        std::string::npos);
}

TEST_CASE("prioritize-pods-without-gpus: with scoring.podsWithoutGpus the plain verb scores the same") {
  ServeConfig cfg;
  REQUIRE(ApplyConfigYaml("scoring:\n  podsWithoutGpus: true\n", cfg).ok());
  HandMade srv(cfg);
  REQUIRE(srv.Post("/scheduler/filter", Args(PodJson("eight", 8, 60, 128), kNames)));
  const std::string cpu_pod = Args(PodJson("cpu", 0, 8, 32), kNames);
  auto verb = srv.Post(kVerb, cpu_pod);
  auto plain = srv.Post("/scheduler/prioritize", cpu_pod);
  REQUIRE(verb);
  REQUIRE(plain);
  CHECK(ScoresOf(verb->body) == std::map<std::string, int>{{"big", 10}, {"small", 0}});
  CHECK(ScoresOf(plain->body) == ScoresOf(verb->body));
}

TEST_CASE("prioritize-pods-without-gpus: a GPU pod gets no score at all, and is not observed") {
  LiveServer srv;
  const uint64_t seen = srv.app->pipeline().workload().Snapshot()->observed;
  // Names the model does not know, too: the verb does not look at nodes for a GPU pod.
  for (const std::string& names : {std::string(kDemoNames), std::string(R"(["no-such-node","a100-1"])")}) {
    CAPTURE(names);
    auto res = srv.Post(kVerb, Args(GpuPod("g", 2), names));
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->body == "[]");
  }
  // Through init containers as well (kube-scheduler's effective request).
  auto init = srv.Post(kVerb, Args(R"({"metadata":{"name":"i","namespace":"t","uid":"uid-i"},"spec":{"containers":[{"name":"c"}],)"
                                   R"("initContainers":[{"name":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{}})",
                                   kDemoNames));
  REQUIRE(init);
  CHECK(init->body == "[]");
  CHECK(srv.app->pipeline().workload().Snapshot()->observed == seen);
  CHECK(srv.app->model().pending().Get("uid-g") == std::nullopt);
  const std::string metrics = srv.client->Get("/metrics")->body;
  CHECK(metrics.find(R"(topofit_decisions_total{verb="prioritize-pods-without-gpus",outcome="gpu_pod"} 3)") !=
        std::string::npos);
}

TEST_CASE("prioritize-pods-without-gpus: malformed bodies are a 400 with a JSON error, the model untouched") {
  LiveServer srv;
  const int free_before = srv.app->model().Totals().free_gpus;
  for (const char* body : {"not json", "{", R"({"NodeNames":["a100-1"]})", R"({"Pod":[]})", R"({"Pod":{},"NodeNames":[7]})",
                           R"({"Pod":{"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"1.5"}}}]}}})"}) {
    CAPTURE(body);
    auto res = srv.Post(kVerb, body);
    REQUIRE(res);
    CHECK(res->status == 400);
    CHECK_FALSE(json::parse(res->body)["error"].get<std::string>().empty());
  }
  CHECK(json::parse(srv.Post(kVerb, "not json")->body)["error"].get<std::string>().starts_with("invalid JSON"));
  CHECK(srv.app->model().Totals().free_gpus == free_before);
  const std::string metrics = srv.client->Get("/metrics")->body;
  CHECK(metrics.find(R"(topofit_request_errors_total{verb="prioritize-pods-without-gpus"} 7)") != std::string::npos);
}

}  // namespace topofit::server
