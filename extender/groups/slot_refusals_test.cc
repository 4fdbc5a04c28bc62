// A slot kube-scheduler turns away: when the candidate list proves it, the group is planned again at
// once around its bound members, without that node; the re-plans are bounded; a list that may have
// been cut short proves nothing.
#include "extender/groups/slot_refusals.h"

#include <doctest/doctest.h>

#include "extender/groups/group_coordinator.h"
#include "extender/groups/testing/coordinator_rig.h"

namespace topofit::groups {
namespace {

using cluster::testing::MakePod;

// A member of group train (2 members of 8 GPUs, required in a block).
k8s::PodObject Member(const std::string& uid) { return testing::BlockMember(uid, "train", 2); }

struct Rig : testing::CoordinatorRig {
  std::vector<std::string> names;
  Rig(int blocks, int per_block) : CoordinatorRig(blocks, per_block) {
    for (const testing::SmallNode& n : testing::Blocks(blocks, per_block)) names.push_back(n.name);
  }
  // kube-scheduler's candidates: every node but `refused`.
  std::vector<std::string_view> Without(const std::string& refused) const {
    std::vector<std::string_view> out;
    for (const std::string& n : names)
      if (n != refused) out.push_back(n);
    return out;
  }
  // The member planned, bound on its slot and reported bound by the watch.
  std::string Bind(const k8s::PodObject& pod) {
    const GroupVerdict v = FilterAndBind(pod);
    REQUIRE_FALSE(v.node.empty());
    return v.node;
  }
  // The node of `uid`'s slot: the one it has, else the one its next filter gets (the first unassigned).
  std::string SlotNode(const std::string& uid) {
    auto r = groups.reservations().Get("default/train");
    if (!r) return "";
    for (const cluster::GroupSlot& s : r->slots)
      if (s.member_uid == uid) return s.node;
    for (const cluster::GroupSlot& s : r->slots)
      if (s.member_uid.empty()) return s.node;
    return "";
  }
};

TEST_CASE("slot refusals: a list shorter than kube-scheduler's minimum search proves a refusal, a longer one does not") {
  const std::vector<std::string_view> few = {"n1", "n2"};
  CHECK(SlotRefusals::SlotRefused("n3", few));
  CHECK_FALSE(SlotRefusals::SlotRefused("n2", few));
  CHECK_FALSE(SlotRefusals::SlotRefused("", few));
  std::vector<std::string> many_names;
  for (size_t i = 0; i < SlotRefusals::kMinFeasibleNodesToFind; ++i) many_names.push_back("m" + std::to_string(i));
  const std::vector<std::string_view> many(many_names.begin(), many_names.end());
  CHECK_FALSE(SlotRefusals::SlotRefused("n3", many));
  CHECK(SlotRefusals::SlotRefused("n3", std::span(many).first(many.size() - 1)));
  // Nominated to the slot's node, kube-scheduler tries it alone first: a list of any length without it
  // proves the refusal; nominated elsewhere, it does not.
  CHECK(SlotRefusals::SlotRefused("n3", many, "n3"));
  CHECK_FALSE(SlotRefusals::SlotRefused("n3", many, "m1"));
  CHECK_FALSE(SlotRefusals::SlotRefused("m1", many, "m1"));  // Sent: not refused.
}

TEST_CASE("group coordinator: a member whose slot node was not sent is nominated there, and then a long list proves a refusal") {
  Rig r(2, 60);  // 120 nodes: more than kube-scheduler's minimum search
  r.Filter(Member("a"), std::nullopt);
  GroupVerdict b = r.Filter(Member("b"), r.Without("none"));
  REQUIRE_FALSE(b.node.empty());
  CHECK_FALSE(b.nominate);  // its slot's node was sent: it binds there now, nothing to write
  // A list of 119 nodes without the slot's node may have been cut short: the slot is kept, and the
  // member nominated to it.
  const auto candidates = r.Without(b.node);
  REQUIRE(candidates.size() >= SlotRefusals::kMinFeasibleNodesToFind);
  GroupVerdict kept = r.Filter(Member("b"), candidates);
  CHECK(kept.node == b.node);
  CHECK(kept.replanned.empty());
  CHECK(kept.nominate);
  CHECK(kept.reason.find("the reservation is kept until it expires, and the member is nominated to it") !=
        std::string::npos);
  // Nominated there, the same list proves kube-scheduler turned the node away: planned again at once.
  k8s::PodObject nominated = Member("b");
  nominated.nominated_node = b.node;
  GroupVerdict v = r.Filter(nominated, candidates);
  CHECK(v.replanned == b.node);
  REQUIRE_FALSE(v.node.empty());
  CHECK(v.node != b.node);
  CHECK_FALSE(v.nominate);  // the new slot's node was sent
  CHECK_FALSE(r.Filter(Member("b"), std::nullopt).nominate);  // no candidates (explain): nothing written
}

TEST_CASE("group coordinator: a held member with a nominatedNodeName gets it cleared") {
  Rig r(2, 2);
  k8s::PodObject a = Member("a");
  a.nominated_node = "b1-n1";  // e.g. nominated before its group's reservation expired
  GroupVerdict v = r.Filter(a, r.Without("none"));
  CHECK(v.node.empty());
  CHECK(v.nominate);  // node "" clears it
  CHECK_FALSE(r.Filter(Member("a"), r.Without("none")).nominate);  // held, nominated nowhere: nothing to write
}

TEST_CASE("slot refusals: at most kMaxReplans re-plans in a window, each node left out for the window") {
  cluster::FakeClock clock;
  SlotRefusals r(std::chrono::seconds(60));
  CHECK(r.MayReplan("ml/g", clock.Now()));
  r.Record("ml/g", "n1", "g-1", clock.Now());
  r.Record("ml/g", "n1", "g-2", clock.Now());
  CHECK(r.Excluded("ml/g", clock.Now()) == std::vector<std::string>{"n1"});
  CHECK(r.MayReplan("ml/g", clock.Now()));
  clock.Advance(std::chrono::seconds(30));
  r.Record("ml/g", "n2", "g-1", clock.Now());
  CHECK_FALSE(r.MayReplan("ml/g", clock.Now()));
  CHECK(r.MayReplan("ml/other", clock.Now()));
  const auto notes = r.Notes("ml/g", clock.Now());
  REQUIRE(notes.size() == 3);
  CHECK(notes[0] == "kube-scheduler turned away node n1 for g-1's slot 30 s ago: the group was planned again "
                    "without it (left out for 60 s)");
  clock.Advance(std::chrono::seconds(31));  // the first two are older than the window
  CHECK(r.MayReplan("ml/g", clock.Now()));
  CHECK(r.Excluded("ml/g", clock.Now()) == std::vector<std::string>{"n2"});
}

TEST_CASE("group coordinator: a slot node kube-scheduler turned away is planned again at once, around the bound member") {
  Rig r(2, 3);
  r.Filter(Member("b"), std::nullopt);
  const std::string a_node = r.Bind(Member("a"));
  const std::string refused = r.SlotNode("b");
  REQUIRE_FALSE(refused.empty());
  REQUIRE(refused != a_node);
  const auto candidates = r.Without(refused);  // e.g. tainted NoSchedule
  GroupVerdict v = r.Filter(Member("b"), candidates);
  CHECK(v.replanned == refused);
  CHECK(v.reason.empty());
  REQUIRE_FALSE(v.node.empty());
  CHECK(v.node != refused);
  CHECK(v.node != a_node);
  CHECK(v.node.substr(0, 2) == a_node.substr(0, 2));  // the bound member's block
  CHECK(r.model.Node(refused)->free.size() == 8);  // its slot given back
  CHECK(r.model.Totals().reserved_gpus == 8);      // one slot, b's new one
  CHECK(r.groups.reservations().Get("default/train")->slots.size() == 1);
  CHECK(r.SlotNode("b") == v.node);
  // The same filter again, the node still refused: the same new slot, nothing planned again.
  GroupVerdict again = r.Filter(Member("b"), candidates);
  CHECK(again.node == v.node);
  CHECK(again.replanned.empty());
  auto groups = r.groups.Groups();
  REQUIRE(groups.size() == 1);
  REQUIRE(groups[0].notes.size() == 1);
  CHECK(groups[0].notes[0] == "kube-scheduler turned away node " + refused + " for pod-b's slot 0 s ago: the group was "
                              "planned again without it (left out for 60 s)");
}

TEST_CASE("group coordinator: no room without the refused node - the group waits whole, the reason names the node") {
  Rig r(2, 2);
  r.model.ApplyPod(MakePod("other", 8, "b2-n1", "0,1,2,3,4,5,6,7"));  // b2 has room for one member
  r.Filter(Member("b"), std::nullopt);
  r.Bind(Member("a"));
  const std::string refused = r.SlotNode("b");
  GroupVerdict v = r.Filter(Member("b"), r.Without(refused));
  CHECK(v.replanned == refused);
  CHECK(v.node.empty());
  CHECK(v.reason == "group train: no block can take 1 member of 8 GPUs: the best, s1/b1, has room for 0; left out: "
                    "node " + refused + " (kube-scheduler turned it away for a member's slot)");
  CHECK(r.model.Totals().reserved_gpus == 0);  // nothing held for a group that cannot go on
  // After the window the node is tried again.
  r.clock.Advance(std::chrono::seconds(61));
  GroupVerdict later = r.Filter(Member("b"), r.Without("none"));
  CHECK(later.node == refused);
}

TEST_CASE("group coordinator: re-plans for refused slots are bounded, then the slot is kept until it expires") {
  Rig r(1, 6);
  r.Filter(Member("b"), std::nullopt);
  const std::string a_node = r.Bind(Member("a"));
  std::vector<std::string> refused;
  for (int i = 0; i < SlotRefusals::kMaxReplans; ++i) {
    refused.push_back(r.SlotNode("b"));
    GroupVerdict v = r.Filter(Member("b"), r.Without(refused.back()));
    CHECK(v.replanned == refused.back());
    REQUIRE_FALSE(v.node.empty());
    for (const std::string& n : refused) CHECK(v.node != n);
  }
  const std::string kept = r.SlotNode("b");
  GroupVerdict v = r.Filter(Member("b"), r.Without(kept));
  CHECK(v.replanned.empty());
  CHECK(v.node == kept);
  CHECK(v.reason.find("which kube-scheduler turned away; the group was planned again 3 times in 60 s already") !=
        std::string::npos);
  CHECK(r.model.Totals().reserved_gpus == 8);
}

TEST_CASE("group coordinator: a slot node missing from a list that may be cut short is kept, the reason says why") {
  Rig r(1, 3);
  r.Filter(Member("b"), std::nullopt);
  r.Bind(Member("a"));
  const std::string slot = r.SlotNode("b");
  std::vector<std::string> names;
  for (size_t i = 0; i < SlotRefusals::kMinFeasibleNodesToFind; ++i) names.push_back("far-" + std::to_string(i));
  const std::vector<std::string_view> many(names.begin(), names.end());
  GroupVerdict v = r.Filter(Member("b"), many);
  CHECK(v.replanned.empty());
  CHECK(v.node == slot);
  CHECK(v.reason.find("which kube-scheduler did not send among its 100 nodes") != std::string::npos);
  CHECK(r.SlotNode("b") == slot);
}

}  // namespace
}  // namespace topofit::groups

namespace topofit::groups {
namespace {

TEST_CASE("group coordinator: a list of another block's nodes alone is a domain tried, not a refusal") {
  Rig r(3, 2);  // b1..b3, two nodes each; the group is planned into one of them.
  r.Filter(Member("a"), std::nullopt);
  const GroupVerdict planned = r.Filter(Member("b"), std::nullopt);
  REQUIRE_FALSE(planned.node.empty());
  const std::string block = planned.node.substr(0, 2);
  const std::string other = block == "b3" ? "b2" : "b3";
  // kube-scheduler's topology-aware workload scheduling filters the gang against one block at a time.
  const std::string n1 = other + "-n1", n2 = other + "-n2";
  const std::vector<std::string_view> tried = {n1, n2};
  const GroupVerdict v = r.Filter(Member("b"), tried);
  CHECK(v.node == planned.node);  // The slot kept: nothing planned again, nothing left out.
  CHECK(v.replanned.empty());
  CHECK_FALSE(v.nominate);
  CHECK(v.reason == "group train: kube-scheduler is trying block s1/" + other +
                        " alone (topology-aware workload scheduling); this group's slots are in block s1/" + block);
  CHECK(r.model.Totals().reserved_gpus == 16);
  // The slot's own block without the slot node is a refusal, as before.
  const std::string mate = planned.node.substr(0, 4) + (planned.node.back() == '1' ? "2" : "1");
  const std::vector<std::string_view> own = {mate};
  CHECK(r.Filter(Member("b"), own).replanned == planned.node);
}

}  // namespace
}  // namespace topofit::groups
