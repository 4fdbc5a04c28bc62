// The reconciler's pure decisions: gpu-actual from kubelet's truth by UID, mismatches and their
// detail, when to publish, the health annotation; pods kubelet has finished, and what the matcher
// does with them.
#include "extender/node/plugin/reconciler.h"

#include <doctest/doctest.h>

#include "extender/node/plugin/matcher.h"
#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {

using testing::Decoded;
using testing::Gpus;

TEST_CASE("reconciler: actual by UID, a mismatch named per container, foreign and unknown pods") {
  testing::TestPod old{"job", "old", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({0})}}};
  old.deleting = true;
  std::vector<NodePod> pods = {
      Decoded(old),
      Decoded({"job", "new", "n1", "n1", "2026-11-23T00:01:00Z", 0, {{"c", 2, Gpus({1, 2})}, {"d", 1, Gpus({3})}}}),
      Decoded({"foreign", "uf", "n1", ""})};
  std::vector<PodDevices> truth = {
      {"default", "job", {{"c", Gpus({2, 1})}, {"d", Gpus({4})}}},
      {"default", "foreign", {{"x", Gpus({5})}}},
      {"default", "static-pod", {{"x", Gpus({6})}}},
      {"default", "cpu-only", {}}};
  auto reports = ComputeActuals("n1", pods, truth, 1795000000);
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].pod->uid == "new");
  CHECK(k8s::EncodeGpuAssignment(reports[0].actual) ==
        R"({"v":1,"node":"n1","containers":{"c":["GPU-0001","GPU-0002"],"d":["GPU-0004"]},"t":1795000000})");
  CHECK(reports[0].mismatch);
  CHECK(reports[0].detail == "d: planned GPU-0003, holds GPU-0004");
  CHECK(reports[1].pod->uid == "uf");
  CHECK_FALSE(reports[1].mismatch);
}

TEST_CASE("reconciler: a container not admitted yet is no mismatch, and publishing happens only on a change") {
  std::vector<NodePod> pods = {
      Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"a", 1, Gpus({0})}, {"b", 1, Gpus({1})}}})};
  auto reports = ComputeActuals("n1", pods, {{"default", "p", {{"a", Gpus({0})}}}}, 5);
  REQUIRE(reports.size() == 1);
  CHECK_FALSE(reports[0].mismatch);
  CHECK(NeedsPublish(reports[0]));
  pods[0].actual = reports[0].actual;
  pods[0].actual->unix_seconds = 1;  // Published earlier: the time alone is no change.
  reports = ComputeActuals("n1", pods, {{"default", "p", {{"a", Gpus({0})}}}}, 9);
  CHECK_FALSE(NeedsPublish(reports[0]));
  reports = ComputeActuals("n1", pods, {{"default", "p", {{"a", Gpus({0})}, {"b", Gpus({1})}}}}, 9);
  CHECK(NeedsPublish(reports[0]));
}

TEST_CASE("reconciler: the health annotation lists unhealthy devices sorted") {
  CHECK(EncodeGpuHealth({"GPU-b", "GPU-a"}, 7) == R"({"v":1,"unhealthy":["GPU-a","GPU-b"],"t":7})");
  CHECK(EncodeGpuHealth({}, 7) == R"({"v":1,"unhealthy":[],"t":7})");
}

TEST_CASE("reconciler: the pods worth a Get are the planned pods a List left out that the matcher could pick") {
  std::vector<NodePod> pods = {
      Decoded({"running", "ur", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({0})}}}),
      Decoded({"late", "ul", "n1", "n1", "2026-11-23T00:03:00Z", 0, {{"c", 1, Gpus({1})}}}),
      Decoded({"early", "ue", "n1", "n1", "2026-11-23T00:01:00Z", 0, {{"c", 1, Gpus({2})}}}),
      Decoded({"allocated", "ua", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({3})}}}),
      Decoded({"ended", "ux", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({4})}}}),
      Decoded({"elsewhere", "uo", "n2", "n2", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({5})}}}),
      Decoded({"foreign", "uf", "n1", ""})};
  Ledger ledger;
  ledger.Record("ua", "c", Gpus({3}));  // Allocated since the List: nothing left to admit.
  ledger.MarkEnded("ux");
  const std::vector<PodDevices> listed = {{"default", "running", {{"c", Gpus({0})}}}};
  auto names = [](const std::vector<const NodePod*>& ps) {
    std::vector<std::string> out;
    for (const NodePod* p : ps) out.push_back(p->name);
    return out;
  };
  CHECK(names(PodsToAsk("n1", pods, ledger, listed, {}, 5)) == std::vector<std::string>{"early", "late"});
  CHECK(names(PodsToAsk("n1", pods, ledger, listed, {}, 1)) == std::vector<std::string>{"early"});
  // Asked in the last reconcile: the one never asked goes first.
  CHECK(names(PodsToAsk("n1", pods, ledger, listed, {{"ue", 3}}, 1)) == std::vector<std::string>{"late"});
}

TEST_CASE("reconciler: a pod Get knew and a later List leaves out has ended, a pod not known or listed has not") {
  std::vector<NodePod> pods = {
      Decoded({"ended", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({0})}}}),
      Decoded({"admitting", "u2", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({1})}}}),
      Decoded({"unseen", "u3", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({2})}}}),
      Decoded({"unanswered", "u4", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({3})}}}),
      Decoded({"held", "u5", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({4})}}})};
  const std::vector<const NodePod*> asked = {&pods[0], &pods[1], &pods[2], &pods[3], &pods[4]};
  const std::vector<KubeletView> views = {KubeletView::kAdmitting, KubeletView::kAdmitting, KubeletView::kNotFound,
                                          KubeletView::kUnknown, KubeletView::kHasDevices};
  const std::vector<PodDevices> later = {{"default", "admitting", {}}};
  CHECK(EndedPods(asked, views, later) == std::vector<std::string>{"u1", "u5"});
}

TEST_CASE("matcher: a pod kubelet has ended is no candidate and its plan is reserved no more") {
  // Kubelet's Get says "admitting" of the ended pod too (it knows it and it holds nothing): only the
  // ledger's mark tells them apart.
  std::vector<NodePod> pods = {
      Decoded({"a", "ua", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({6, 7})}}}),
      Decoded({"b", "ub", "n1", "n1", "2026-11-23T00:01:00Z", 0, {{"c", 2, Gpus({4, 5})}}})};
  Ledger ledger;
  auto admitting = OneByOne([](const NodePod&, const std::string&) { return KubeletView::kAdmitting; });
  const PreferredRequest r{Gpus({0, 1, 2, 3, 4, 5, 6, 7}), {}, 2};
  CHECK(Match(r, "n1", pods, ledger, admitting, {}).reply == Gpus({6, 7}));  // Unmarked: A, the earlier, wins.
  ledger.MarkEnded("ua");
  CHECK(Match(r, "n1", pods, ledger, admitting, {}).reply == Gpus({4, 5}));
  CHECK(IdentifyAllocation(Gpus({6, 7}), "n1", pods, ledger, std::nullopt, std::nullopt).pod_uid.empty());
  // A pod of another size with no plan: A's GPUs are offered to the backend again.
  const PreferredRequest one{Gpus({0, 6}), {}, 1};
  auto m = Match(one, "n1", pods, ledger, {}, [](const PreferredRequest& b) { return std::optional(b.available); });
  CHECK(m.decision.backend.available == Gpus({0, 6}));
  // Kubelet's truth replaces the entries, the mark stays until the pod leaves the cache.
  ledger.ReplaceWithTruth({}, ledger.seq());
  CHECK(ledger.Ended("ua"));
  ledger.Retain({"ub"});
  CHECK_FALSE(ledger.Ended("ua"));
}

TEST_CASE("reconciler: an init container's GPUs are reported for its pod's life, and kubelet's pick is no mismatch") {
  // setup holds 4 GPUs and main takes 2 of them, the ones kubelet picks; List reports main alone.
  std::vector<NodePod> pods = {
      Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
               {{"setup", 4, Gpus({4, 5, 6, 7}), true}, {"main", 2, Gpus({4, 5})}}}),
      Decoded({"q", "u2", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"setup", 1, Gpus({0}), true}, {"main", 1, Gpus({0})}}})};
  pods[1].actual = GpuAssignment{"n1", {{"setup", Gpus({0})}, {"main", Gpus({0})}}, 1};  // Published before a restart.
  Ledger ledger;
  ledger.Record("u1", "setup", Gpus({4, 5, 6, 7}));
  ledger.Record("u1", "main", Gpus({6, 4}));
  auto list = WithInitHoldings(pods, ledger,
                               {{"default", "p", {{"main", Gpus({6, 4})}}},
                                {"default", "q", {{"main", Gpus({0})}}},
                                {"default", "static", {{"x", Gpus({1})}}}});
  REQUIRE(list[0].containers.size() == 2);
  CHECK(list[0].containers[0] == std::pair<std::string, DeviceList>{"setup", Gpus({4, 5, 6, 7})});
  CHECK(list[0].containers[1].first == "main");
  REQUIRE(list[1].containers.size() == 2);
  CHECK(list[1].containers[0] == std::pair<std::string, DeviceList>{"setup", Gpus({0})});
  CHECK(list[2].containers.size() == 1);
  auto reports = ComputeActuals("n1", pods, list, 5);
  REQUIRE(reports.size() == 2);
  CHECK(k8s::EncodeGpuAssignment(reports[0].actual) ==
        R"({"v":1,"node":"n1","containers":{"setup":["GPU-0004","GPU-0005","GPU-0006","GPU-0007"],"main":["GPU-0004","GPU-0006"]},"t":5})");
  CHECK_FALSE(reports[0].mismatch);
  // A pick outside setup's GPUs is kubelet not following the plan.
  list[0].containers[1].second = Gpus({4, 1});
  CHECK(ComputeActuals("n1", pods, list, 5)[0].detail == "main: planned GPU-0004,GPU-0005, holds GPU-0001,GPU-0004");
  // A pod without a ledger entry or a published actual for its init container: nothing to add.
  pods[1].actual.reset();
  CHECK(WithInitHoldings(pods, Ledger{}, {{"default", "q", {{"main", Gpus({0})}}}})[0].containers.size() == 1);
}

}  // namespace topofit::node
