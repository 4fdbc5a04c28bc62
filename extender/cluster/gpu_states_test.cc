// GPU states in the model: free, planned, in use, foreign, unhealthy - and every transition
// between them, driven by the annotations the extender and the node side write.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "extender/k8s/gpu_plan.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/placer.h"

namespace topofit::cluster {
namespace {

using testing::MakeNode;
using testing::MakePod;

std::string Uuid(int i) { return "GPU-n-" + std::to_string(i); }

// An 8-GPU DGX-1 node with the UUID map the node side publishes; `health`: also a health report.
k8s::NodeObject UuidNode(std::optional<std::vector<int>> unhealthy = std::nullopt, int allocatable = 8) {
  k8s::NodeObject n = MakeNode("n", allocatable, "dgx1-v100");
  std::string uuids;
  for (int i = 0; i < 8; ++i) uuids += (i ? "," : "") + Uuid(i);
  n.meta.annotations[k8s::kGpuUuidsAnnotation] = uuids;
  if (unhealthy) {
    k8s::GpuHealthReport r;
    for (int i : *unhealthy) r.unhealthy.push_back(Uuid(i));
    n.meta.annotations[k8s::kGpuHealthAnnotation] = k8s::EncodeGpuHealth(r);
  }
  return n;
}

// {"c": {0,1}} -> the annotation text.
std::string Assignment(std::vector<std::pair<std::string, std::vector<int>>> containers, std::string node = "n") {
  k8s::GpuAssignment a;
  a.node = std::move(node);
  a.unix_seconds = 1700000000;
  for (auto& [name, gpus] : containers) {
    std::vector<std::string> ids;
    for (int g : gpus) ids.push_back(Uuid(g));
    a.containers.emplace_back(name, ids);
  }
  return k8s::EncodeGpuAssignment(a);
}

k8s::PodObject Planned(const std::string& uid, std::vector<std::pair<std::string, std::vector<int>>> plan) {
  int count = 0;
  GpuSet ids;
  for (auto& [n, g] : plan) {
    count += static_cast<int>(g.size());
    for (int i : g) ids.Add(i);
  }
  return MakePod(uid, count, "n", ids.ToString(), 0, {{k8s::kGpuPlanAnnotation, Assignment(plan)}});
}

std::vector<GpuState> States(const ClusterModel& model) {
  std::vector<GpuState> out;
  auto info = model.Node("n");
  for (const auto& g : info->gpus) out.push_back(g.state);
  return out;
}

constexpr GpuState F = GpuState::kFree, P = GpuState::kPlanned, U = GpuState::kInUse, X = GpuState::kForeign,
                   H = GpuState::kUnhealthy, N = GpuState::kUnusable;

NodeState::Chooser Take(GpuSet set) {
  return [set](const NodeState&, GpuSet free) -> std::optional<GpuSet> {
    if (!set.IsSubsetOf(free)) return std::nullopt;
    return set;
  };
}

TEST_CASE("gpu states: free -> planned (bind) -> planned with containers -> in use -> terminating -> free") {
  ClusterModel model;
  model.ApplyNode(UuidNode());
  CHECK(States(model) == std::vector<GpuState>(8, F));
  auto info = model.Node("n");
  CHECK(info->gpus[3].uuid == Uuid(3));

  // Bind reserves: planned, no container known yet.
  PodRequest req = MakePodRequest(MakePod("a", 2));
  REQUIRE(model.Reserve(req, "n", Take(GpuSet::Of({0, 1}))).ok());
  CHECK(States(model) == std::vector<GpuState>{P, P, F, F, F, F, F, F});
  REQUIRE(model.Confirm("a").ok());

  // The watch brings the bound pod with its plan: planned, per container.
  model.ApplyPod(Planned("a", {{"c", {0, 1}}}));
  info = model.Node("n");
  CHECK(info->gpus[0].state == P);
  CHECK(info->gpus[0].container == "c");
  CHECK(info->gpus[0].pod == "default/pod-a");
  CHECK(info->pods[0].state == HoldState::kPlanned);

  // The node side observes the same set: in use.
  k8s::PodObject observed = Planned("a", {{"c", {0, 1}}});
  observed.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {0, 1}}});
  model.ApplyPod(observed);
  CHECK(States(model) == std::vector<GpuState>{U, U, F, F, F, F, F, F});
  CHECK(model.Node("n")->pods[0].observed);

  // Deleted: still held while it terminates (kubelet has not freed the devices).
  observed.meta.deleting = true;
  model.ApplyPod(observed);
  info = model.Node("n");
  CHECK(States(model) == std::vector<GpuState>{U, U, F, F, F, F, F, F});
  CHECK(info->gpus[0].terminating);
  CHECK(info->free == GpuSet::Of({2, 3, 4, 5, 6, 7}));

  // Terminal: free.
  observed.phase = "Succeeded";
  model.ApplyPod(observed);
  CHECK(States(model) == std::vector<GpuState>(8, F));
}

TEST_CASE("gpu states: a terminating pod's GPUs are never planned for another pod, until it is gone") {
  ClusterModel model;
  model.ApplyNode(UuidNode());
  k8s::PodObject victim = Planned("v", {{"c", {0, 1, 2, 3, 4, 5, 6, 7}}});
  victim.meta.deleting = true;
  model.ApplyPod(victim);
  PodRequest req = MakePodRequest(MakePod("p", 2));
  auto r = model.Reserve(req, "n", [](const NodeState&, GpuSet free) -> std::optional<GpuSet> {
    if (free.size() < 2) return std::nullopt;
    return GpuSet::Of({free.Indices()[0], free.Indices()[1]});
  });
  CHECK_FALSE(r.ok());
  model.DeletePod("v");  // The watch's DELETED: gone.
  CHECK(model.Reserve(req, "n", Take(GpuSet::Of({0, 1}))).ok());
}

TEST_CASE("gpu states: actual beats plan - kubelet gave other GPUs - the plan's are free again") {
  ClusterModel model;
  model.ApplyNode(UuidNode());
  k8s::PodObject a = Planned("a", {{"c", {0, 1}}});
  model.ApplyPod(a);
  a.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {2, 5}}});
  model.ApplyPod(a);
  CHECK(States(model) == std::vector<GpuState>{F, F, U, F, F, U, F, F});
  CHECK(model.Node("n")->pods[0].gpus == GpuSet::Of({2, 5}));
  CHECK(model.Node("n")->free == GpuSet::Of({0, 1, 3, 4, 6, 7}));
}

TEST_CASE("gpu states: an init container's surplus kubelet keeps is counted once the node reports it") {
  // setup asks 4, main 2 of them (kubelet's pick, 4 and 7); the pod holds 4 for its life.
  ClusterModel model;
  model.ApplyNode(UuidNode());
  k8s::PodObject a = MakePod("a", 4, "n", "4-7", 0, {{k8s::kGpuPlanAnnotation, Assignment({{"setup", {4, 5, 6, 7}}, {"main", {4, 5}}})}});
  model.ApplyPod(a);
  CHECK(model.Node("n")->free == GpuSet::Of({0, 1, 2, 3}));
  // Only main reported (PodResources alone): 2 GPUs observed, the other 2 of unknown identity.
  a.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"main", {4, 7}}});
  model.ApplyPod(a);
  CHECK_FALSE(model.Node("n")->pods[0].conflict.empty());
  // What topofit node reports: the init container's GPUs too - exactly kubelet's.
  a.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"setup", {4, 5, 6, 7}}, {"main", {4, 7}}});
  model.ApplyPod(a);
  CHECK(States(model) == std::vector<GpuState>{F, F, F, F, U, U, U, U});
  CHECK(model.Node("n")->pods[0].gpus == GpuSet::Of({4, 5, 6, 7}));
  CHECK(model.Node("n")->pods[0].conflict.empty());
  CHECK(model.Node("n")->free == GpuSet::Of({0, 1, 2, 3}));
}

TEST_CASE("gpu states: an observed set wins over another pod's plan - that plan loses its identity, never a GPU twice") {
  ClusterModel model;
  model.ApplyNode(UuidNode());
  model.ApplyPod(Planned("a", {{"c", {0, 1}}}));  // Planned, not admitted yet.
  k8s::PodObject b = Planned("b", {{"c", {2, 3}}});
  b.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {1, 2}}});  // kubelet filled from 1.
  model.ApplyPod(b);
  auto info = model.Node("n");
  REQUIRE(info->pods.size() == 2);
  const PodGpuInfo& pa = info->pods[0];
  const PodGpuInfo& pb = info->pods[1];
  CHECK(pb.gpus == GpuSet::Of({1, 2}));
  CHECK(pb.state == HoldState::kInUse);
  CHECK(pa.unknown_identity);
  CHECK(pa.conflict.find("already held by default/pod-b") != std::string::npos);
  CHECK(pa.gpus.size() == 2);
  CHECK(pa.gpus.contains(0));  // What b did not take of a's plan stays a's: no later plan gets it.
  CHECK_FALSE(pa.gpus.Intersects(pb.gpus));
  CHECK(info->free.size() == 4);
}

TEST_CASE("gpu states: foreign - bound by someone else, observed or not") {
  ClusterModel model;
  model.ApplyNode(UuidNode());
  // Bound by another scheduler, no annotation at all: foreign, which GPUs is a guess.
  model.ApplyPod(MakePod("x", 2, "n"));
  auto info = model.Node("n");
  int foreign = 0;
  for (const auto& g : info->gpus) {
    if (g.state == X) {
      ++foreign;
      CHECK(g.guessed);
    }
  }
  CHECK(foreign == 2);
  // The node side observes it: foreign still (no plan), now on the GPUs it really holds.
  k8s::PodObject x = MakePod("x", 2, "n");
  x.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"main", {6, 7}}});
  model.ApplyPod(x);
  CHECK(States(model) == std::vector<GpuState>{F, F, F, F, F, F, X, X});
  info = model.Node("n");
  CHECK_FALSE(info->gpus[6].guessed);
  CHECK(info->gpus[6].container == "main");
  CHECK(info->pods[0].state == HoldState::kForeign);
}

TEST_CASE("gpu states: unhealthy from the node's report replaces the first-N guess") {
  ClusterModel model;
  // 7 allocatable of 8 and no health report: the guess says GPU 7 is the missing one.
  model.ApplyNode(UuidNode(std::nullopt, 7));
  CHECK(States(model) == std::vector<GpuState>{F, F, F, F, F, F, F, N});
  CHECK_FALSE(model.Node("n")->observed);
  // The node reports GPU 2 unhealthy: that one, not GPU 7.
  model.ApplyNode(UuidNode(std::vector<int>{2}, 7));
  CHECK(States(model) == std::vector<GpuState>{F, F, H, F, F, F, F, F});
  auto info = model.Node("n");
  CHECK(info->observed);
  CHECK(info->usable == GpuSet::FirstN(8) - GpuSet::Of({2}));
  // Healthy again.
  model.ApplyNode(UuidNode(std::vector<int>{}, 8));
  CHECK(States(model) == std::vector<GpuState>(8, F));
}

TEST_CASE("gpu states: a GPU that goes unhealthy under a pod stays the pod's, and nobody else gets it") {
  ClusterModel model;
  model.ApplyNode(UuidNode(std::vector<int>{}));
  k8s::PodObject a = Planned("a", {{"c", {0, 1}}});
  a.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {0, 1}}});
  model.ApplyPod(a);
  model.ApplyNode(UuidNode(std::vector<int>{1}, 7));
  auto info = model.Node("n");
  CHECK(info->gpus[1].state == H);
  CHECK(info->gpus[1].pod == "default/pod-a");
  CHECK(info->gpus[0].state == U);
  CHECK(info->free == GpuSet::Of({2, 3, 4, 5, 6, 7}));
}

TEST_CASE("gpu states: a plan never observed on an observing node is dropped after the TTL - the GPUs stay counted") {
  FakeClock clock;
  ModelOptions options;
  options.clock = &clock;
  options.plan_ttl = std::chrono::minutes(3);
  ClusterModel model(options);
  model.ApplyNode(UuidNode(std::vector<int>{}));
  model.ApplyPod(Planned("a", {{"c", {0, 1}}}));
  model.ApplyPod(Planned("b", {{"c", {2, 3}}}));
  clock.Advance(std::chrono::minutes(2));
  // b is observed in time.
  k8s::PodObject b = Planned("b", {{"c", {2, 3}}});
  b.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {2, 3}}});
  model.ApplyPod(b);
  // A re-list of a (same object) does not restart its clock.
  model.ApplyPod(Planned("a", {{"c", {0, 1}}}));
  CHECK(States(model) == std::vector<GpuState>{P, P, U, U, F, F, F, F});
  clock.Advance(std::chrono::seconds(61));
  auto info = model.Node("n");
  REQUIRE(info->pods.size() == 2);
  CHECK(info->pods[0].unknown_identity);
  CHECK(info->pods[0].conflict.find("not observed on the node in time") != std::string::npos);
  CHECK(info->pods[0].gpus.size() == 2);  // Still counted: the pod may run; its GPUs are a guess.
  CHECK(info->pods[1].state == HoldState::kInUse);
  CHECK(info->free.size() == 4);
  // Observed at last: back to known GPUs, in use.
  k8s::PodObject a = Planned("a", {{"c", {0, 1}}});
  a.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {0, 1}}});
  model.ApplyPod(a);
  CHECK(States(model) == std::vector<GpuState>{U, U, U, U, F, F, F, F});
}

TEST_CASE("gpu states: no TTL where the node side does not report - plans are all there is") {
  FakeClock clock;
  ModelOptions options;
  options.clock = &clock;
  ClusterModel model(options);
  model.ApplyNode(UuidNode());
  model.ApplyPod(Planned("a", {{"c", {0, 1}}}));
  clock.Advance(std::chrono::hours(1));
  CHECK(States(model) == std::vector<GpuState>{P, P, F, F, F, F, F, F});
  CHECK_FALSE(model.Node("n")->pods[0].unknown_identity);
}

TEST_CASE("gpu states: index-only nodes (no UUID map) use gpu-ids - plans and actuals there are warned about") {
  ClusterModel model;
  model.ApplyNode(MakeNode("n", 8, "dgx1-v100"));
  k8s::PodObject a = Planned("a", {{"c", {0, 1}}});
  a.meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", {4, 5}}});
  model.ApplyPod(a);
  auto info = model.Node("n");
  CHECK(info->pods[0].gpus == GpuSet::Of({0, 1}));
  CHECK(info->pods[0].state == HoldState::kPlanned);
  CHECK(info->gpus[0].uuid.empty());
  bool warned = false;
  for (const auto& w : info->warnings) warned |= w.find("publishes no topofit.io/gpu-uuids") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("gpu states: plans for another node, unknown UUIDs and malformed annotations are refused, not trusted") {
  ClusterModel model;
  model.ApplyNode(UuidNode());
  // A stale plan for another node: gpu-ids still name the GPUs.
  k8s::PodObject a = MakePod("a", 2, "n", "0,1", 0, {{k8s::kGpuPlanAnnotation, Assignment({{"c", {0, 1}}}, "m")}});
  model.ApplyPod(a);
  auto info = model.Node("n");
  CHECK(info->pods[0].unknown_identity);
  CHECK(info->pods[0].conflict.find("names node m, not n") != std::string::npos);
  // An actual naming a UUID the node does not have, and one that does not parse.
  k8s::PodObject b = MakePod("b", 1, "n", "", 0, {{k8s::kGpuActualAnnotation,
      R"({"v":1,"node":"n","containers":{"c":["GPU-elsewhere"]},"t":1})"}});
  k8s::PodObject c = MakePod("c", 1, "n", "", 0, {{k8s::kGpuActualAnnotation, "{not json"}});
  model.ApplyPod(b);
  model.ApplyPod(c);
  info = model.Node("n");
  CHECK(info->pods[1].unknown_identity);
  CHECK(info->pods[2].unknown_identity);
  int warned = 0;
  for (const auto& w : info->warnings) {
    warned += w.find("GPU-elsewhere, which is not one of the node's GPUs") != std::string::npos;
    warned += w.find("topofit.io/gpu-actual invalid JSON") != std::string::npos;
  }
  CHECK(warned == 2);
  CHECK(info->free.size() == 4);  // 2 + 1 + 1 held, whatever their identity.
}

TEST_CASE("gpu states: the node's UUID map is checked - a wrong count means index-only, with a warning") {
  ClusterModel model;
  k8s::NodeObject n = MakeNode("n", 8, "dgx1-v100");
  n.meta.annotations[k8s::kGpuUuidsAnnotation] = "GPU-a,GPU-b";
  n.meta.annotations[k8s::kGpuHealthAnnotation] = R"({"v":1,"unhealthy":[]})";
  model.ApplyNode(n);
  auto info = model.Node("n");
  CHECK(info->gpus[0].uuid.empty());
  CHECK_FALSE(info->observed);  // Health needs the UUID map.
  int warned = 0;
  for (const auto& w : info->warnings) {
    warned += w.find("topofit.io/gpu-uuids lists 2 entries but the topology has 8 GPUs") != std::string::npos;
    warned += w.find("topofit.io/gpu-health needs topofit.io/gpu-uuids") != std::string::npos;
  }
  CHECK(warned == 2);
}

TEST_CASE("gpu states: random plans, observations, health and deletions never count a GPU for two pods") {
  // Property: whatever the annotations say - overlapping plans, actuals that contradict plans or each
  // other, partial actuals, GPUs going unhealthy, pods terminating - the model's holdings stay pairwise
  // disjoint subsets of the usable GPUs, no pod counts more than it requests, free is exactly the
  // rest, and each GPU's state agrees with it.
  std::mt19937 rng(20261123);
  auto pick = [&](int n, int k) {  // k distinct GPUs of 0..n-1
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(k);
    std::sort(all.begin(), all.end());
    return all;
  };
  for (int round = 0; round < 40; ++round) {
    ClusterModel model;
    model.ApplyNode(UuidNode(std::vector<int>{}));
    std::map<std::string, k8s::PodObject> pods;
    for (int step = 0; step < 60; ++step) {
      const int op = std::uniform_int_distribution<int>(0, 9)(rng);
      const std::string uid = "p" + std::to_string(std::uniform_int_distribution<int>(0, 7)(rng));
      if (op <= 3) {  // A bound pod with a plan (maybe a stale or overlapping one).
        int count = std::uniform_int_distribution<int>(1, 3)(rng);
        pods[uid] = Planned(uid, {{"c", pick(8, count)}});
      } else if (op == 4) {  // A foreign pod, no annotations.
        pods[uid] = MakePod(uid, std::uniform_int_distribution<int>(1, 3)(rng), "n");
      } else if (op <= 6 && pods.count(uid)) {  // An observation, sometimes partial.
        int count = static_cast<int>(pods[uid].gpus);
        int seen = std::max(1, count - std::uniform_int_distribution<int>(0, 1)(rng));
        pods[uid].meta.annotations[k8s::kGpuActualAnnotation] = Assignment({{"c", pick(8, seen)}});
      } else if (op == 7 && pods.count(uid)) {  // Terminating, then maybe gone.
        pods[uid].meta.deleting = true;
        if (rng() % 2) {
          model.DeletePod(uid);
          pods.erase(uid);
          continue;
        }
      } else if (op == 8) {  // Health changes.
        model.ApplyNode(UuidNode(pick(8, std::uniform_int_distribution<int>(0, 2)(rng)), 8));
        continue;
      } else {  // A bind through the model.
        PodRequest req = MakePodRequest(MakePod("bind-" + uid, 1));
        (void)model.Reserve(req, "n", [](const NodeState&, GpuSet free) -> std::optional<GpuSet> {
          if (free.empty()) return std::nullopt;
          return GpuSet::Of({free.Indices()[0]});
        });
        continue;
      }
      if (pods.count(uid)) model.ApplyPod(pods[uid]);

      auto info = model.Node("n");
      REQUIRE(info);
      GpuSet held;
      for (const PodGpuInfo& p : info->pods) {
        CHECK_MESSAGE(!p.gpus.Intersects(held), "round ", round, " step ", step, ": ", p.pod, " shares a GPU");
        CHECK(p.gpus.IsSubsetOf(info->usable));
        CHECK(p.gpus.size() <= p.count);
        held = held | p.gpus;
      }
      CHECK(info->free == info->usable - held);
      for (const GpuStateInfo& g : info->gpus) {
        const bool is_free = info->free.contains(g.index);
        CHECK_MESSAGE((g.state == GpuState::kFree) == is_free, "GPU ", g.index, " state ", ToString(g.state));
      }
    }
  }
}

}  // namespace
}  // namespace topofit::cluster
