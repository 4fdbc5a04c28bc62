// A whole group's reservation in the model: all or nothing, slots by member UID, handed over at bind,
// expiring, released; and the members the model learns from pods.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/group_reservations.h"
#include "extender/cluster/testing/builders.h"

#include <fmt/format.h>

namespace topofit::cluster {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Request;

const auto kAlive = [](std::string_view) { return true; };

struct Rig {
  FakeClock clock;
  ClusterModel model{ModelOptions{.reservation_ttl = std::chrono::seconds(30), .clock = &clock}};
  GroupReservations groups{model};
  Rig() {
    for (const char* n : {"n1", "n2", "n3"}) model.ApplyNode(MakeNode(n, 8, "hgx-h100-8"));
  }
  GpuSet Free(const std::string& node) { return model.Node(node)->free; }
};

const GpuSet kLow = GpuSet::Of({0, 1, 2, 3});
const GpuSet kHigh = GpuSet::Of({4, 5, 6, 7});

TEST_CASE("group reservations: every slot's exact GPUs are held at once, and no single pod gets them") {
  Rig r;
  std::vector<GroupReservations::SlotRequest> slots{{"n1", kLow}, {"n2", kHigh}};
  REQUIRE(r.groups.Reserve("ml/train", slots).ok());
  CHECK(r.Free("n1") == kHigh);
  CHECK(r.Free("n2") == kLow);
  // A pod of no group is chosen a set among what is left; the held GPUs are not offered.
  auto got = r.model.Reserve(Request("solo", 4), "n1", [](const NodeState&, GpuSet free) { return free; });
  REQUIRE(got.ok());
  CHECK(*got == kHigh);
  auto g = r.groups.Get("ml/train");
  REQUIRE(g);
  CHECK(g->slots.size() == 2);
  CHECK(g->slots[0].node == "n1");
  CHECK(g->slots[1].gpus == kHigh);
  // The placeholder shows as the holder, never as a pod name.
  auto n1 = r.model.Node("n1");
  bool shown = false;
  for (const auto& p : n1->pods) shown |= p.pod == "ml/train (group slot 0)";
  CHECK(shown);
  // A second reservation of a live group is refused: its slots would be given twice.
  CHECK_FALSE(r.groups.Reserve("ml/train", std::vector<GroupReservations::SlotRequest>{{"n3", kLow}}).ok());
  CHECK(r.Free("n3") == GpuSet::FirstN(8));
}

TEST_CASE("group reservations: all or nothing - one slot that cannot be held leaves every node as it was") {
  Rig r;
  r.model.ApplyPod(MakePod("held", 1, "n2", "5"));
  std::vector<GroupReservations::SlotRequest> slots{{"n1", kLow}, {"n3", kLow}, {"n2", kHigh}};
  auto s = r.groups.Reserve("ml/train", slots);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("no longer free") != std::string::npos);
  CHECK(r.Free("n1") == GpuSet::FirstN(8));
  CHECK(r.Free("n3") == GpuSet::FirstN(8));
  CHECK_FALSE(r.groups.Get("ml/train"));
  // Two slots on one node must not overlap either.
  std::vector<GroupReservations::SlotRequest> twice{{"n1", kLow}, {"n1", GpuSet::Of({3, 4})}};
  CHECK_FALSE(r.groups.Reserve("ml/b", twice).ok());
  CHECK(r.Free("n1") == GpuSet::FirstN(8));
  CHECK_FALSE(r.groups.Reserve("ml/c", std::vector<GroupReservations::SlotRequest>{{"gone", kLow}}).ok());
}

TEST_CASE("group reservations: a member keeps its slot across repeated filters, and a slot whose member left is reused") {
  Rig r;
  std::vector<GroupReservations::SlotRequest> slots{{"n1", kLow}, {"n2", kLow}};
  REQUIRE(r.groups.Reserve("ml/train", slots).ok());
  auto a = r.groups.Assign("ml/train", "uid-a", kAlive);
  auto b = r.groups.Assign("ml/train", "uid-b", kAlive);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->node == "n1");
  CHECK(b->node == "n2");
  CHECK(r.groups.Assign("ml/train", "uid-a", kAlive)->node == "n1");  // kube-scheduler retried the cycle
  CHECK_FALSE(r.groups.Assign("ml/train", "uid-c", kAlive));           // more pods than slots
  // uid-b was deleted before it bound: its slot goes to the re-created member.
  auto c = r.groups.Assign("ml/train", "uid-c", [](std::string_view uid) { return uid != "uid-b"; });
  REQUIRE(c);
  CHECK(c->node == "n2");
  CHECK(r.groups.SlotOf("ml/train", "uid-c")->node == "n2");
  CHECK_FALSE(r.groups.SlotOf("ml/train", "uid-b"));
}

TEST_CASE("group reservations: bind hands the slot to the pod, and the bind path then finds its GPUs") {
  Rig r;
  std::vector<GroupReservations::SlotRequest> slots{{"n1", kHigh}, {"n2", kLow}};
  REQUIRE(r.groups.Reserve("ml/train", slots).ok());
  PodRequest pod = Request("uid-a", 4);
  REQUIRE(r.groups.Assign("ml/train", pod.uid, kAlive));
  CHECK_FALSE(r.groups.HandOver("ml/train", pod, "n2").ok());  // not its slot's node
  auto gpus = r.groups.HandOver("ml/train", pod, "n1");
  REQUIRE(gpus.ok());
  CHECK(*gpus == kHigh);
  // The existing bind path (Reserve, Confirm) sees the pod's own reservation: the same GPUs.
  auto again = r.model.Reserve(pod, "n1", [](const NodeState&, GpuSet) { return std::optional<GpuSet>(); });
  REQUIRE(again.ok());
  CHECK(*again == kHigh);
  CHECK(r.model.Confirm("uid-a").ok());
  CHECK(r.model.PodByUid("uid-a")->gpus == kHigh);
  CHECK(r.groups.Get("ml/train")->slots[0].handed);
  // Released whole: the slot not handed goes, the bound member's GPUs stay.
  r.groups.Release("ml/train");
  CHECK(r.Free("n2") == GpuSet::FirstN(8));
  CHECK(r.Free("n1") == kLow);
  CHECK_FALSE(r.groups.Get("ml/train"));
}

TEST_CASE("group reservations: dropping the slots not handed over keeps the handed ones, and a group with none is forgotten") {
  Rig r;
  std::vector<GroupReservations::SlotRequest> slots{{"n1", kHigh}, {"n2", kLow}, {"n3", kLow}};
  REQUIRE(r.groups.Reserve("ml/train", slots).ok());
  PodRequest pod = Request("uid-a", 4);
  REQUIRE(r.groups.Assign("ml/train", pod.uid, kAlive));
  REQUIRE(r.groups.Assign("ml/train", "uid-b", kAlive));  // assigned, not bound: dropped too
  REQUIRE(r.groups.HandOver("ml/train", pod, "n1").ok());
  CHECK(r.groups.DropUnhanded("ml/train") == 2);
  CHECK(r.Free("n2") == GpuSet::FirstN(8));
  CHECK(r.Free("n3") == GpuSet::FirstN(8));
  CHECK(r.Free("n1") == kLow);  // the handed slot is the pod's reservation still
  auto g = r.groups.Get("ml/train");
  REQUIRE(g);
  REQUIRE(g->slots.size() == 1);
  CHECK(g->all_handed());
  CHECK(g->slots[0].member_uid == "uid-a");
  CHECK_FALSE(r.groups.SlotOf("ml/train", "uid-b"));
  CHECK(r.groups.DropUnhanded("ml/train") == 0);
  // None handed: the whole group goes.
  REQUIRE(r.groups.Reserve("ml/other", std::vector<GroupReservations::SlotRequest>{{"n2", kLow}}).ok());
  CHECK(r.groups.DropUnhanded("ml/other") == 1);
  CHECK_FALSE(r.groups.Get("ml/other"));
  CHECK(r.Free("n2") == GpuSet::FirstN(8));
  CHECK(r.groups.DropUnhanded("ml/never") == 0);
}

TEST_CASE("group reservations: a group that does not bind within the TTL loses them, and members arriving refresh it") {
  Rig r;
  std::vector<GroupReservations::SlotRequest> slots{{"n1", kLow}, {"n2", kLow}};
  REQUIRE(r.groups.Reserve("ml/train", slots).ok());
  r.clock.Advance(GroupReservations::kTtl - std::chrono::seconds(1));
  REQUIRE(r.groups.Assign("ml/train", "uid-a", kAlive));  // refreshes: a full TTL from now
  r.clock.Advance(std::chrono::seconds(2));
  CHECK(r.groups.Get("ml/train"));
  CHECK(r.Free("n1") == kHigh);
  r.clock.Advance(GroupReservations::kTtl);
  CHECK(r.Free("n1") == GpuSet::FirstN(8));  // the holds expire in the model by themselves
  CHECK_FALSE(r.groups.Get("ml/train"));
  CHECK(r.groups.All().empty());
  // The bind of a member after the TTL still gets its slot's GPUs when nobody took them.
  std::vector<GroupReservations::SlotRequest> one{{"n3", kLow}};
  REQUIRE(r.groups.Reserve("ml/late", one).ok());
  PodRequest pod = Request("uid-l", 4);
  REQUIRE(r.groups.Assign("ml/late", pod.uid, kAlive));
  (void)r.model.Release(GroupReservations::HoldUid("ml/late", 0));  // as if the hold had expired alone
  auto gpus = r.groups.HandOver("ml/late", pod, "n3");
  REQUIRE(gpus.ok());
  CHECK(*gpus == kLow);
  CHECK(r.Free("n3") == kHigh);
}

TEST_CASE("group members: the model counts a group's pods, pending and bound, and drops those leaving") {
  Rig r;
  auto member = [](const std::string& uid, const std::string& node) {
    k8s::PodObject p = MakePod(uid, 4, node, node.empty() ? "" : "0,1,2,3", 0, {{k8s::kGroupAnnotation, "train"}});
    return p;
  };
  r.model.ApplyPod(member("a", "n1"));
  r.model.ApplyPod(member("b", ""));
  r.model.ApplyPod(MakePod("solo", 4));  // no group
  auto m = r.model.group_members().Of("default/train");
  REQUIRE(m.size() == 2);
  CHECK(m[0].uid == "a");
  CHECK(m[0].bound());
  CHECK(m[0].node == "n1");
  CHECK_FALSE(m[1].bound());
  CHECK(r.model.group_members().Keys() == std::vector<std::string>{"default/train"});
  k8s::PodObject leaving = member("a", "n1");
  leaving.meta.deleting = true;
  r.model.ApplyPod(leaving);
  CHECK(r.model.group_members().Of("default/train").size() == 1);
  CHECK(r.model.Node("n1")->free == kHigh);  // a terminating pod still holds its GPUs
  r.model.DeletePod("b");
  CHECK(r.model.group_members().Of("default/train").empty());
  // A pending member not seen again within the pending TTL is gone.
  r.model.ApplyPod(member("c", ""));
  r.clock.Advance(PendingPods::kDefaultTtl);
  CHECK(r.model.group_members().Of("default/train").empty());
}

// Every holding of the node has disjoint GPUs, all usable.
bool Consistent(const NodeState& node) {
  GpuSet seen;
  for (const Holding& h : node.Holdings()) {
    if (h.gpus.Intersects(seen) || !h.gpus.IsSubsetOf(node.usable())) return false;
    seen = seen | h.gpus;
  }
  return true;
}

TEST_CASE("group reservations: racing groups and pods never share a GPU, and a group holds all of its slots or none") {
  Rig r;
  constexpr int kThreads = 6;
  std::atomic<int> violations{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      const char* nodes[] = {"n1", "n2", "n3"};
      for (int i = 0; i < 300; ++i) {
        const std::string key = fmt::format("ns/g{}-{}", t, i);
        std::vector<GroupReservations::SlotRequest> slots;
        for (int k = 0; k < 3; ++k) slots.push_back({nodes[rng() % 3], GpuSet::Of({int(rng() % 8), int(rng() % 8)})});
        const bool ok = r.groups.Reserve(key, slots).ok();
        auto held = r.groups.Get(key);
        if (ok != held.has_value()) violations.fetch_add(1);
        if (rng() % 3 == 0) {
          PodRequest solo = Request(fmt::format("solo{}-{}", t, i), 1);
          (void)r.model.Reserve(solo, nodes[rng() % 3], [](const NodeState&, GpuSet free) -> std::optional<GpuSet> {
            if (free.empty()) return std::nullopt;
            return GpuSet::Of({free.Lowest()});
          });
          (void)r.model.Release(solo.uid);
        }
        r.model.Read().ForEach([&](const NodeState& n) {
          if (!Consistent(n)) violations.fetch_add(1);
        });
        if (ok) r.groups.Release(key);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(violations.load() == 0);
  for (const char* n : {"n1", "n2", "n3"}) CHECK(r.Free(n) == GpuSet::FirstN(8));
}

}  // namespace
}  // namespace topofit::cluster
