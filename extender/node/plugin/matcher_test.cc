// The matcher's table cases (docs/kubelet-contracts.md §6): which planned container a
// GetPreferredAllocation request is for, and what is answered, when it is ambiguous or impossible.
#include "extender/node/plugin/matcher.h"

#include <doctest/doctest.h>

#include <map>

#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {
namespace {

using testing::Decoded;
using testing::Gpus;
using testing::TestPod;

constexpr const char* kNode = "n1";

// Kubelet's views by pod name (default kUnknown); the backend answers the first `size` it is offered.
struct World {
  std::vector<NodePod> pods;
  Ledger ledger;
  std::map<std::string, KubeletView> views;
  bool backend_fails = false;
  std::vector<PreferredRequest> backend_calls;
  int asked_one_by_one = 0;

  MatchResult Ask(DeviceList available, int size, DeviceList must = {}) {
    PreferredRequest r{std::move(available), std::move(must), size};
    return Match(
        r, kNode, pods, ledger,
        OneByOne([&](const NodePod& p, const std::string&) {
          ++asked_one_by_one;
          return views.count(p.name) ? views[p.name] : KubeletView::kUnknown;
        }),
        [&](const PreferredRequest& req) -> std::optional<DeviceList> {
          backend_calls.push_back(req);
          if (backend_fails) return std::nullopt;
          DeviceList out = req.must_include;
          for (const auto& id : req.available) {
            if (static_cast<int>(out.size()) < req.size && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
          }
          return out;
        });
  }
};

DeviceList Sorted(DeviceList d) {
  std::sort(d.begin(), d.end());
  return d;
}

const DeviceList kAll = Gpus({0, 1, 2, 3, 4, 5, 6, 7});

}  // namespace

TEST_CASE("matcher: a single planned container of the asked size gets exactly its plan") {
  World w;
  w.pods = {Decoded({"a", "ua", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 4, Gpus({4, 5, 6, 7})}}})};
  auto r = w.Ask(kAll, 4);
  CHECK(r.decision.kind == Decision::Kind::kPlanned);
  CHECK(r.decision.pod_uid == "ua");
  CHECK_FALSE(r.decision.tentative);
  CHECK(Sorted(r.reply) == Gpus({4, 5, 6, 7}));
  CHECK(w.backend_calls.empty());
}

TEST_CASE("matcher: equal-size pods admitted out of bind order: kubelet's view picks the one it admits") {
  World w;
  w.pods = {Decoded({"first", "u1", kNode, kNode, "2026-11-23T00:00:00Z", 100, {{"c", 2, Gpus({0, 1})}}}),
            Decoded({"second", "u2", kNode, kNode, "2026-11-23T00:00:05Z", 105, {{"c", 2, Gpus({2, 3})}}})};
  // Kubelet admits "second" first: it knows it, not "first".
  w.views = {{"first", KubeletView::kNotFound}, {"second", KubeletView::kAdmitting}};
  auto r = w.Ask(kAll, 2);
  CHECK(r.candidates == 2);
  CHECK(r.decision.pod_uid == "u2");
  CHECK_FALSE(r.decision.tentative);
  CHECK(Sorted(r.reply) == Gpus({2, 3}));
  w.ledger.Record("u2", "c", r.reply);
  // Then "first": its set is still whole in available.
  w.views = {{"first", KubeletView::kAdmitting}, {"second", KubeletView::kHasDevices}};
  auto r2 = w.Ask(Gpus({0, 1, 4, 5, 6, 7}), 2);
  CHECK(r2.candidates == 1);
  CHECK(r2.decision.pod_uid == "u1");
  CHECK(Sorted(r2.reply) == Gpus({0, 1}));
}

TEST_CASE("matcher: same creation time and no kubelet view: the earlier plan, then the name, tentative") {
  World w;
  w.pods = {Decoded({"b", "ub", kNode, kNode, "2026-11-23T00:00:00Z", 7, {{"c", 2, Gpus({2, 3})}}}),
            Decoded({"a", "ua", kNode, kNode, "2026-11-23T00:00:00Z", 7, {{"c", 2, Gpus({0, 1})}}}),
            Decoded({"z", "uz", kNode, kNode, "2026-11-23T00:00:00Z", 9, {{"c", 2, Gpus({4, 5})}}})};
  auto r = w.Ask(kAll, 2);
  CHECK(r.decision.kind == Decision::Kind::kPlanned);
  CHECK(r.decision.tentative);
  CHECK(r.decision.pod_uid == "ua");  // t 7 ties, then namespace/name.
  // Kubelet's Get failing for one and answering for another: the confirmed one wins.
  w.views = {{"z", KubeletView::kAdmitting}};
  auto r2 = w.Ask(kAll, 2);
  CHECK(r2.decision.pod_uid == "uz");
  CHECK_FALSE(r2.decision.tentative);
}

TEST_CASE("matcher: a multi-container pod is served container by container, in spec order") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0,
                     {{"main", 2, Gpus({0, 1})}, {"helper", 2, Gpus({2, 3})}}})};
  auto r = w.Ask(kAll, 2);
  CHECK(r.decision.container == "main");
  CHECK(Sorted(r.reply) == Gpus({0, 1}));
  w.ledger.Record("up", "main", r.reply);
  auto r2 = w.Ask(Gpus({2, 3, 4, 5, 6, 7}), 2);
  CHECK(r2.decision.container == "helper");
  CHECK(Sorted(r2.reply) == Gpus({2, 3}));
}

TEST_CASE("matcher: init container first, then an app container reusing its devices gets them as must_include") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0,
                     {{"init", 2, Gpus({0, 1}), true}, {"main", 4, Gpus({0, 1, 2, 3})}}})};
  auto r = w.Ask(kAll, 2);
  CHECK(r.decision.container == "init");
  w.ledger.Record("up", "init", r.reply);
  // Kubelet reuses the init container's two and asks for the full four with them as must_include.
  auto r2 = w.Ask(Gpus({0, 1, 2, 3, 4, 5, 6, 7}), 4, Gpus({0, 1}));
  CHECK(r2.decision.kind == Decision::Kind::kPlanned);
  CHECK(r2.decision.container == "main");
  CHECK(Sorted(r2.reply) == Gpus({0, 1, 2, 3}));
  // The reused GPUs are the same pod's: no conflict.
  CHECK_FALSE(w.ledger.Conflicts(Gpus({0, 1}), "up"));
  CHECK(w.ledger.Conflicts(Gpus({0, 1}), "other"));
}

TEST_CASE("matcher: a running pod's init container is no candidate once kubelet's truth replaced the ledger") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0,
                     {{"init", 2, Gpus({0, 1}), true}, {"main", 2, Gpus({0, 1})}}}),
            Decoded({"q", "uq", kNode, kNode, "2026-11-23T00:00:05Z", 0, {{"main", 2, Gpus({4, 5})}}})};
  // PodResources List reports p's app container only (kubelet leaves out regular init containers).
  w.ledger.ReplaceWithTruth({{"up", "main", Gpus({0, 1}), 0, true}}, w.ledger.seq());
  w.views = {{"p", KubeletView::kAdmitting}, {"q", KubeletView::kAdmitting}};
  auto r = w.Ask(Gpus({2, 3, 4, 5, 6, 7}), 2);
  CHECK(r.candidates == 1);
  CHECK(r.decision.pod_uid == "uq");
  CHECK(Sorted(r.reply) == Gpus({4, 5}));
  // Without q in the cache, the request is nobody's here: p's init container does not take it.
  w.pods.pop_back();
  auto r2 = w.Ask(Gpus({2, 3, 4, 5, 6, 7}), 2);
  CHECK(r2.candidates == 0);
  CHECK(r2.decision.kind == Decision::Kind::kUnplanned);
}

TEST_CASE("matcher: must_include outside every plan: no exact match, the backend fills around it") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  auto r = w.Ask(Gpus({0, 1, 4, 5}), 2, Gpus({6}));
  CHECK(r.decision.kind == Decision::Kind::kUnplanned);
  REQUIRE(r.reply.size() == 2);
  CHECK(r.reply[0] == Gpus({6})[0]);
  // GPUs 0 and 1 are planned for p: the backend is offered 4 and 5 (and the must_include).
  REQUIRE(w.backend_calls.size() == 1);
  CHECK(Sorted(w.backend_calls[0].available) == Gpus({4, 5, 6}));
  CHECK(r.reply[1] == Gpus({4})[0]);
}

TEST_CASE("matcher: a planned GPU missing from available keeps the rest of the plan and asks the backend") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 4, Gpus({0, 1, 2, 3})}}}),
            Decoded({"q", "uq", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({6, 7})}}})};
  // GPU 2 is unhealthy (or a terminating pod's): kubelet offers the others.
  auto r = w.Ask(Gpus({0, 1, 3, 4, 5, 6, 7}), 4);
  CHECK(r.decision.kind == Decision::Kind::kPartial);
  CHECK(r.decision.pod_uid == "up");
  REQUIRE(w.backend_calls.size() == 1);
  CHECK(Sorted(w.backend_calls[0].must_include) == Gpus({0, 1, 3}));
  // q's GPUs stay out of the offer while other GPUs suffice.
  CHECK(Sorted(w.backend_calls[0].available) == Gpus({0, 1, 3, 4, 5}));
  CHECK(Sorted(r.reply) == Gpus({0, 1, 3, 4}));
}

TEST_CASE("matcher: the backend failing still yields a full answer from what was offered") {
  World w;
  w.backend_fails = true;
  w.pods = {Decoded({"q", "uq", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  auto r = w.Ask(Gpus({0, 1, 2, 3}), 3);  // A foreign pod of size 3.
  CHECK(r.decision.kind == Decision::Kind::kUnplanned);
  // Only 2 and 3 are free of plans: fewer than 3, so all of available is offered.
  CHECK(Sorted(r.reply) == Gpus({0, 1, 2}));
}

TEST_CASE("matcher: a stale plan for another node, or of a pod bound elsewhere, is ignored") {
  World w;
  w.pods = {Decoded({"stale", "us", kNode, "n2", "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}}),
            Decoded({"moved", "um", "n2", kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({2, 3})}}})};
  auto r = w.Ask(kAll, 2);
  CHECK(r.decision.kind == Decision::Kind::kUnplanned);
  CHECK(r.candidates == 0);
  // Neither reserves GPUs against foreign pods either.
  REQUIRE(w.backend_calls.size() == 1);
  CHECK(w.backend_calls[0].available == kAll);
}

TEST_CASE("matcher: a re-created pod of the same name: the deleting one is ignored, the new one matched") {
  World w;
  TestPod old{"job", "old-uid", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}};
  old.deleting = true;
  TestPod fresh{"job", "new-uid", kNode, kNode, "2026-11-23T00:01:00Z", 60, {{"c", 2, Gpus({2, 3})}}};
  w.pods = {Decoded(old), Decoded(fresh)};
  w.views = {{"job", KubeletView::kAdmitting}};
  auto r = w.Ask(kAll, 2);
  CHECK(r.decision.pod_uid == "new-uid");
  CHECK(Sorted(r.reply) == Gpus({2, 3}));
  // A terminal pod of that name is ignored the same way.
  TestPod done = old;
  done.deleting = false;
  done.phase = "Succeeded";
  w.pods = {Decoded(done)};
  CHECK(w.Ask(kAll, 2).decision.kind == Decision::Kind::kUnplanned);
}

TEST_CASE("matcher: a plan one of whose GPUs a foreign pod took keeps the rest and fills one") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  w.ledger.Record("", "", Gpus({1}));  // A foreign pod got GPU 1: kubelet no longer offers it.
  auto r = w.Ask(Gpus({0, 2, 3}), 2);
  CHECK(r.candidates == 1);
  CHECK(r.decision.kind == Decision::Kind::kPartial);
  CHECK(Sorted(r.reply) == Gpus({0, 2}));
}

TEST_CASE("matcher: the ledger's stale holders do not block a plan kubelet offers whole") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  w.ledger.Record("", "", Gpus({1}));  // The foreign pod is gone; the reconciler has not run yet.
  auto r = w.Ask(Gpus({0, 1, 2, 3}), 2);
  CHECK(r.decision.kind == Decision::Kind::kPlanned);
  CHECK(Sorted(r.reply) == Gpus({0, 1}));
}

TEST_CASE("matcher: a foreign pod of a planned size does not get the plan when kubelet does not know its pod") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  w.views = {{"p", KubeletView::kNotFound}};
  auto r = w.Ask(Gpus({0, 1, 2, 3}), 2);
  CHECK(r.asked == 1);
  CHECK(r.decision.kind == Decision::Kind::kUnplanned);
  CHECK(Sorted(r.reply) == Gpus({2, 3}));
  // Without PodResources (every view unknown) the single candidate is followed.
  w.views.clear();
  CHECK(w.Ask(Gpus({0, 1, 2, 3}), 2).decision.pod_uid == "up");
}

TEST_CASE("matcher: kubelet admitting the pod whose plan broke: it keeps what it can, the whole plan stays") {
  World w;
  w.pods = {Decoded({"whole", "uw", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}}),
            Decoded({"broken", "ub", kNode, kNode, "2026-11-23T00:00:01Z", 0, {{"c", 2, Gpus({2, 3})}}})};
  w.views = {{"whole", KubeletView::kNotFound}, {"broken", KubeletView::kAdmitting}};
  auto r = w.Ask(Gpus({0, 1, 2, 4, 5}), 2);  // GPU 3 went unhealthy.
  CHECK(r.asked == 2);
  CHECK(r.decision.kind == Decision::Kind::kPartial);
  CHECK(r.decision.pod_uid == "ub");
  CHECK(Sorted(r.reply) == Gpus({2, 4}));
}

TEST_CASE("matcher: kubelet's views are asked in waves, in order, the earliest alone, and stop after the wave with the pod it admits") {
  World w;
  for (int i = 0; i < 7; ++i) {
    w.pods.push_back(Decoded({"p" + std::to_string(i), "u" + std::to_string(i), kNode, kNode,
                              "2026-11-23T00:00:0" + std::to_string(i) + "Z", 0, {{"c", 1, Gpus({i})}}}));
  }
  // Waves: p0 alone; p1 to p5; p6.
  SUBCASE("the earliest is the one: one Get") {
    w.views = {{"p0", KubeletView::kAdmitting}};
    auto r = w.Ask(kAll, 1);
    CHECK(r.candidates == 7);
    CHECK(r.asked == 1);
    CHECK(r.decision.pod_uid == "u0");
    CHECK_FALSE(r.decision.tentative);
  }
  SUBCASE("the second wave has it") {
    w.views = {{"p1", KubeletView::kAdmitting}, {"p0", KubeletView::kNotFound}};
    auto r = w.Ask(kAll, 1);
    CHECK(r.asked == 1 + kViewWave);
    CHECK(w.asked_one_by_one == 1 + kViewWave);
    CHECK(r.unknown == kViewWave - 1);
    CHECK(r.decision.pod_uid == "u1");
    CHECK_FALSE(r.decision.tentative);
  }
  SUBCASE("two in one wave say admitting: the earliest, as asking one by one would") {
    w.views = {{"p0", KubeletView::kNotFound}, {"p3", KubeletView::kAdmitting}, {"p2", KubeletView::kAdmitting}};
    auto r = w.Ask(kAll, 1);
    CHECK(r.asked == 1 + kViewWave);
    CHECK(r.decision.pod_uid == "u2");
  }
  SUBCASE("the last wave has it: every candidate asked") {
    for (int i = 0; i < 7; ++i) w.views["p" + std::to_string(i)] = KubeletView::kNotFound;
    w.views["p6"] = KubeletView::kAdmitting;
    auto r = w.Ask(kAll, 1);
    CHECK(r.asked == 7);
    CHECK(r.unknown == 0);
    CHECK(r.decision.pod_uid == "u6");
  }
  SUBCASE("none admitting: those kubelet could not be asked about stay, the earliest is followed") {
    for (int i = 0; i < 7; ++i) w.views["p" + std::to_string(i)] = KubeletView::kNotFound;
    w.views.erase("p4");
    w.views.erase("p5");
    auto r = w.Ask(kAll, 1);
    CHECK(r.asked == 7);
    CHECK(r.unknown == 2);
    CHECK(r.decision.pod_uid == "u4");
    CHECK(r.decision.tentative);
  }
}

TEST_CASE("matcher: a views function that answers short counts the missing views as unknown") {
  std::vector<NodePod> pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  Ledger ledger;
  PreferredRequest r{Gpus({0, 1, 2, 3}), {}, 2};
  auto m = Match(r, kNode, pods, ledger, [](const std::vector<const Candidate*>&) { return std::vector<KubeletView>{}; },
                 nullptr);
  CHECK(m.asked == 1);
  CHECK(m.decision.pod_uid == "up");
}

TEST_CASE("matcher: a size no plan has is a foreign request: backend with planned GPUs held back") {
  World w;
  w.pods = {Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}})};
  auto r = w.Ask(kAll, 1);
  CHECK(r.decision.kind == Decision::Kind::kUnplanned);
  REQUIRE(r.reply.size() == 1);
  CHECK(r.reply[0] == Gpus({2})[0]);
}

TEST_CASE("matcher: a request of size 0 or with nothing available answers empty, never fails") {
  World w;
  CHECK(w.Ask({}, 0).reply.empty());
  CHECK(w.Ask({}, 2).reply.empty());
}

TEST_CASE("identify: the pending GetPreferredAllocation decision names the holder, else an equal plan") {
  std::vector<NodePod> pods = {
      Decoded({"p", "up", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({0, 1})}}}),
      Decoded({"q", "uq", kNode, kNode, "2026-11-23T00:00:00Z", 0, {{"c", 2, Gpus({2, 3})}}})};
  Ledger ledger;
  // No call before it (an init container's devices reused): the plan equal to D.
  Holder h = IdentifyAllocation(Gpus({3, 2}), kNode, pods, ledger, std::nullopt, std::nullopt);
  CHECK(h.pod_uid == "uq");
  CHECK(h.planned);
  CHECK(IdentifyAllocation(Gpus({0, 2}), kNode, pods, ledger, std::nullopt, std::nullopt).pod_uid.empty());
  Decision last;
  last.pod_uid = "up";
  last.container = "c";
  last.size = 2;
  h = IdentifyAllocation(Gpus({0, 1}), kNode, pods, ledger, last, std::nullopt);
  CHECK(h.pod_uid == "up");
  CHECK(h.planned);
  h = IdentifyAllocation(Gpus({0, 5}), kNode, pods, ledger, last, std::nullopt);  // Kubelet deviated from p's plan.
  CHECK(h.pod_uid == "up");
  CHECK_FALSE(h.planned);
  // An unplanned decision: a foreign pod, even when it got exactly q's plan.
  Decision foreign;
  foreign.size = 2;
  CHECK(IdentifyAllocation(Gpus({2, 3}), kNode, pods, ledger, foreign, std::nullopt).pod_uid.empty());
  // After an unidentified Allocate, a reuse-only Allocate (no call before it) is nobody's either,
  // even when it equals a plan; after an identified one, it is that pod's next container.
  CHECK(IdentifyAllocation(Gpus({2, 3}), kNode, pods, ledger, std::nullopt, Holder{}).pod_uid.empty());
  Holder after = IdentifyAllocation(Gpus({7}), kNode, pods, ledger, std::nullopt, Holder{"up", "init", true});
  CHECK(after.pod_uid == "up");
  CHECK(after.container == "c");
  CHECK_FALSE(after.planned);
  ledger.Record("uq", "c", Gpus({2, 3}));
  CHECK(IdentifyAllocation(Gpus({2, 3}), kNode, pods, ledger, std::nullopt, std::nullopt).pod_uid.empty());
}

}  // namespace topofit::node
