// GroupCoordinator: a group held until its members are there, planned and reserved whole, each member
// led to its slot; no plan binds nothing; racing groups; a re-created member; a restart mid-group.
#include "extender/groups/group_coordinator.h"

#include <atomic>
#include <thread>

#include <doctest/doctest.h>

#include "extender/groups/testing/coordinator_rig.h"

namespace topofit::groups {
namespace {

using cluster::testing::MakePod;

using testing::BlockMember;

struct Rig : testing::CoordinatorRig {
  using CoordinatorRig::CoordinatorRig;
  std::string BlockOf(const std::string& node) { return node.substr(0, 2); }
};

TEST_CASE("group coordinator: held until its members are there, then planned whole and each member led to its slot") {
  Rig r;
  GroupVerdict first = r.Filter(BlockMember("a", "train", 2));
  CHECK(first.member);
  CHECK(first.node.empty());
  CHECK(first.reason == "group train: 1 of 2 pods created");
  CHECK(r.model.Totals().reserved_gpus == 0);
  GroupVerdict second = r.Filter(BlockMember("b", "train", 2));
  REQUIRE_FALSE(second.node.empty());
  CHECK(second.planned_now);
  CHECK(second.domain == "block s1/b1");
  REQUIRE(second.requeue.size() == 1);  // "a" waits: kube-scheduler is asked to try it now
  CHECK(second.requeue[0].uid == "a");
  CHECK(r.model.Totals().reserved_gpus == 16);  // both slots at once
  GroupVerdict again = r.Filter(BlockMember("a", "train", 2));
  CHECK(again.node != second.node);
  CHECK(r.BlockOf(again.node) == r.BlockOf(second.node));
  CHECK(r.Filter(BlockMember("a", "train", 2)).node == again.node);  // the same slot on every call
  CHECK(r.Filter(BlockMember("c", "train", 2)).reason ==
        "group train: all 2 slots of its plan are taken by other members");
  auto groups = r.groups.Groups();
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].state == GroupState::kPlanned);
  CHECK(groups[0].members_seen == 3);
  // A pod of no group is none of the coordinator's business.
  CHECK_FALSE(r.groups.Filter(cluster::MakePodRequest(MakePod("solo", 8))).member);
}

TEST_CASE("group coordinator: a group with no plan binds nothing, and every member says why") {
  Rig r(2, 2);
  r.Filter(BlockMember("a", "big", 3));
  CHECK(r.Filter(BlockMember("b", "big", 3)).requeue.empty());  // not complete: nobody is asked to retry
  GroupVerdict v = r.Filter(BlockMember("c", "big", 3));
  CHECK(v.node.empty());
  CHECK(v.reason == "group big: no block can take 3 members of 8 GPUs: the best, s1/b1, has room for 2");
  CHECK(v.requeue.size() == 2);  // the reason changed: a and b are asked to retry, to say it too
  CHECK(r.model.Totals().reserved_gpus == 0);
  GroupVerdict a = r.groups.Filter(cluster::MakePodRequest(BlockMember("a", "big", 3)));
  CHECK(a.reason == v.reason);
  CHECK(a.requeue.empty());  // the same reason: no bouncing
  auto e = r.groups.Explain(cluster::MakePodRequest(BlockMember("a", "big", 3)));
  REQUIRE(e);
  CHECK(e->level == "block");
  REQUIRE(e->domains.size() == 2);
  CHECK(e->domains[0].room == 2);
  CHECK_FALSE(e->domains[0].fits);
  CHECK(e->plan.empty());
  // Invalid annotations hold the member with the annotation's error.
  k8s::PodObject bad = BlockMember("x", "oops", 2);
  bad.meta.annotations["topofit.io/group-size"] = "eight";
  CHECK(r.Filter(bad).reason.find("invalid topofit.io/group-size 'eight'") != std::string::npos);
}

TEST_CASE("group coordinator: two groups racing for the last block - one gets all of it, the other waits whole") {
  Rig r(2, 2);
  r.Filter(BlockMember("x1", "first", 2));
  r.FilterAndBind(BlockMember("x2", "first", 2));
  r.FilterAndBind(BlockMember("x1", "first", 2));  // one block is full now
  for (int round = 0; round < 20; ++round) {
    cluster::FakeClock& clock = r.clock;
    const std::string g1 = "g" + std::to_string(round) + "a", g2 = "g" + std::to_string(round) + "b";
    for (const auto& [uid, g] : std::vector<std::pair<std::string, std::string>>{{g1 + "-1", g1}, {g2 + "-1", g2}})
      r.Filter(BlockMember(uid, g, 2));
    GroupVerdict v1, v2;
    std::thread t1([&] { v1 = r.groups.Filter(cluster::MakePodRequest(BlockMember(g1 + "-2", g1, 2))); });
    std::thread t2([&] { v2 = r.groups.Filter(cluster::MakePodRequest(BlockMember(g2 + "-2", g2, 2))); });
    t1.join();
    t2.join();
    CHECK(v1.node.empty() != v2.node.empty());  // exactly one is planned
    const GroupVerdict& lost = v1.node.empty() ? v1 : v2;
    CHECK(lost.reason.find("no block can take 2 members of 8 GPUs") != std::string::npos);
    CHECK(r.model.Totals().reserved_gpus == 16);  // the winner's two slots, nothing of the loser's
    r.groups.reservations().Release(v1.node.empty() ? v2.key : v1.key);
    clock.Advance(std::chrono::seconds(1));
  }
}

TEST_CASE("group coordinator: a re-created member goes back into its group's block") {
  Rig r(2, 2);
  r.model.ApplyPod(MakePod("other", 1, "b2-n1", "0"));  // b2 partly used: b1 is not the best fit
  r.Filter(BlockMember("a", "train", 2));
  GroupVerdict b = r.FilterAndBind(BlockMember("b", "train", 2));
  r.FilterAndBind(BlockMember("a", "train", 2));
  const std::string block = r.BlockOf(b.node);
  r.model.DeletePod("b");  // the worker restarts: a new pod, a new UID
  GroupVerdict back = r.Filter(BlockMember("b2", "train", 2));
  REQUIRE_FALSE(back.node.empty());
  CHECK(r.BlockOf(back.node) == block);
  CHECK(r.groups.reservations().Get("default/train")->slots.size() == 1);  // only the missing member
}

TEST_CASE("group coordinator: after a restart the bound members are learnt and only the rest is planned") {
  Rig before(2, 2);
  before.Filter(BlockMember("b", "train", 2));
  REQUIRE_FALSE(before.FilterAndBind(BlockMember("a", "train", 2)).node.empty());
  const std::string a_node = before.model.PodByUid("a")->node;
  // topofit restarts: a new model learns "a" bound (its annotations) and "b" pending; "b"'s slot is gone.
  Rig after(2, 2);
  after.model.ApplyPod(BlockMember("a", "train", 2, a_node, before.model.PodByUid("a")->gpus.ToString()));
  GroupVerdict v = after.Filter(BlockMember("b", "train", 2));
  REQUIRE_FALSE(v.node.empty());
  CHECK(after.BlockOf(v.node) == after.BlockOf(a_node));
  CHECK(v.node != a_node);
  CHECK(after.model.Totals().reserved_gpus == 8);  // one slot: "a" is not planned twice
  auto groups = after.groups.Groups();
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].members_bound == 1);
}

}  // namespace
}  // namespace topofit::groups

namespace topofit::groups {
namespace {

TEST_CASE("group coordinator: a waiting group's failed plan is recalled, but not past a reservation's expiry") {
  testing::CoordinatorRig r(1, 2);
  r.Filter(testing::BlockMember("a1", "first", 2));
  REQUIRE(r.Filter(testing::BlockMember("a2", "first", 2)).planned_now);  // reserved, never bound
  r.Filter(testing::BlockMember("b1", "second", 2));
  const std::string waits = "group second: no block can take 2 members of 8 GPUs: the best, s1/b1, has room for 0";
  CHECK(r.Filter(testing::BlockMember("b2", "second", 2)).reason == waits);
  r.clock.Advance(std::chrono::milliseconds(500));
  CHECK(r.Filter(testing::BlockMember("b1", "second", 2)).reason == waits);  // recalled: nothing changed
  // Group first's reservation expires unbound; nothing reads the nodes, so no generation changes -
  // the recall must still end, and the group be planned on the GPUs the expiry frees.
  r.clock.Advance(cluster::GroupReservations::kTtl);
  GroupVerdict v = r.Filter(testing::BlockMember("b2", "second", 2));
  CHECK(v.planned_now);
  CHECK(v.reason.empty());
}

}  // namespace
}  // namespace topofit::groups
