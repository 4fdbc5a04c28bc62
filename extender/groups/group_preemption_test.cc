// What a group could have if kube-scheduler preempted pods of lower priority for it: the nodes read as
// if those pods were gone, the pods a plan would preempt, and the coordinator leading each member of a
// group with no plan to its slot in such a plan - for kube-scheduler's workload-aware preemption - while
// reserving nothing and binding nothing until the pods are really gone.
#include "extender/groups/group_preemption.h"

#include <doctest/doctest.h>

#include "extender/cluster/pod_group_store.h"
#include "extender/groups/pod_group_lookup.h"
#include "extender/groups/testing/coordinator_rig.h"

namespace topofit::groups {
namespace {

using cluster::testing::MakePod;
using testing::BlockMember;

// A member of `group` (2 members of 8 GPUs, required in a block) of the given priority.
k8s::PodObject Member(const std::string& uid, const std::string& group, int32_t priority) {
  k8s::PodObject p = BlockMember(uid, group, 2);
  p.priority = priority;
  return p;
}

// Two blocks of two 8-GPU nodes: b1 full of four 4-GPU pods of priority 10; in b2, b2-n2 is full with
// one 8-GPU pod of priority 1000 and b2-n1 free. A 2 x 8-GPU group fits in no block as things are.
struct Rig : testing::CoordinatorRig {
  Rig() : CoordinatorRig(2, 2) {
    model.ApplyPod(MakePod("low-0", 4, "b1-n1", "0,1,2,3", 10));
    model.ApplyPod(MakePod("low-1", 4, "b1-n1", "4,5,6,7", 10));
    model.ApplyPod(MakePod("low-2", 4, "b1-n2", "0,1,2,3", 10));
    model.ApplyPod(MakePod("low-3", 4, "b1-n2", "4,5,6,7", 10));
    model.ApplyPod(MakePod("keeper", 8, "b2-n2", "0,1,2,3,4,5,6,7", 1000));
  }
};

TEST_CASE("group preemption: the nodes as if every pod of lower priority were gone, never a reservation") {
  Rig r;
  const DomainMap map = DomainMap::FromModel(r.model, testing::SmallLevels());
  const GroupNodes now = ReadGroupNodes(r.model, map);
  const GroupNodes below_1000 = PreemptibleGpus(r.model.Read(), map, 1000, r.lookup).IfPreempted(1000);
  const GroupNodes below_10 = PreemptibleGpus(r.model.Read(), map, 10, r.lookup).IfPreempted(10);
  for (size_t i = 0; i < map.size(); ++i) {
    INFO(map.name(i));
    CHECK(below_10.nodes[i].free == now.nodes[i].free);  // equal priority preempts nothing
    const bool low = map.name(i).starts_with("b1-");
    CHECK(below_1000.nodes[i].free == (low ? below_1000.nodes[i].usable : now.nodes[i].free));
  }
  // A reservation in flight (a bind's, or a group's slot) is no pod: no preemption takes it.
  REQUIRE(r.model.Reserve(cluster::MakePodRequest(MakePod("binding", 8, "", "", 0)), "b2-n1",
                          [](const cluster::NodeState&, GpuSet free) -> std::optional<GpuSet> { return free; }));
  const GroupNodes reserved = PreemptibleGpus(r.model.Read(), map, 1000, r.lookup).IfPreempted(1000);
  CHECK(reserved.nodes[*map.Find("b2-n1")].free.empty());
}

TEST_CASE("group preemption: the pods a plan preempts are those whose GPUs a member's set overlaps") {
  Rig r;
  std::vector<MemberPlan> members(2);
  members[0].node_name = "b1-n1";
  members[0].gpus = GpuSet(0x0f);  // low-0's GPUs only
  members[1].node_name = "b1-n2";
  members[1].gpus = GpuSet(0xff);
  CHECK(Preempted(r.model.Read(), members, 1000, r.lookup) ==
        std::vector<std::string>{"default/pod-low-0", "default/pod-low-2", "default/pod-low-3"});
  CHECK(Preempted(r.model.Read(), members, 10, r.lookup).empty());
  members[1].node_name = "gone";
  CHECK(Preempted(r.model.Read(), members, 1000, r.lookup) == std::vector<std::string>{"default/pod-low-0"});
}

TEST_CASE("group preemption: a PodGroup disrupted whole is one victim, of the PodGroup's priority") {
  Rig r;  // b1: low-0..3 of priority 10; b2-n2: keeper of 1000
  cluster::PodGroupStore store;
  const PodGroupLookup lookup(testing::SmallLevels(), store);
  // A gang of two 8-GPU pods on b2-n1 and (after the keeper leaves) b2-n2; its pods say priority 5000.
  r.model.DeletePod("keeper");
  for (const char* node : {"b2-n1", "b2-n2"}) {
    k8s::PodObject p = MakePod(std::string("gang-") + node, 8, node, "0,1,2,3,4,5,6,7", 5000);
    p.group_ref.pod_group_name = "gang";
    r.model.ApplyPod(p);
  }
  k8s::PodGroupObject gang;
  gang.namespace_ = "default";
  gang.name = "gang";
  gang.min_count = 2;
  const DomainMap map = DomainMap::FromModel(r.model, testing::SmallLevels());
  const int n1 = static_cast<int>(*map.Find("b2-n1"));
  auto free_below = [&](int32_t priority) { return PreemptibleGpus(r.model.Read(), map, priority, lookup).IfPreempted(priority); };
  std::vector<MemberPlan> members(1);
  members[0].node_name = "b2-n1";
  members[0].gpus = GpuSet(0xff);

  SUBCASE("disruptionMode Pod (or no PodGroup known): each pod of its own priority") {
    if (store.Put(gang) != cluster::PodGroupStore::PutResult::kStored) FAIL("PodGroup not stored");
    CHECK(free_below(1000).nodes[n1].free.empty());
    CHECK(free_below(6000).nodes[n1].free.size() == 8);
    CHECK(Preempted(r.model.Read(), members, 6000, lookup) == std::vector<std::string>{"default/pod-gang-b2-n1"});
  }
  SUBCASE("disruptionMode PodGroup: the PodGroup's priority, 0 when it states none") {
    gang.disrupted_whole = true;
    store.Put(gang);
    CHECK(free_below(1000).nodes[n1].free.size() == 8);  // the pods say 5000; the PodGroup, 0
    CHECK(PreemptibleGpus(r.model.Read(), map, 1000, lookup).tiers() == std::vector<int32_t>{1, 1000});  // 0, then 10
    CHECK(Preempted(r.model.Read(), members, 1000, lookup) == std::vector<std::string>{"PodGroup default/gang"});
    gang.priority = 2000;
    store.Put(gang);
    CHECK(free_below(1000).nodes[n1].free.empty());  // now above the group's 1000
    CHECK(Preempted(r.model.Read(), members, 1000, lookup).empty());
    CHECK(free_below(1000).nodes[*map.Find("b1-n1")].free.size() == 8);  // single pods as before
  }
}

TEST_CASE("group preemption: the tiers cut above each priority below the group's, lowest first, at most 8") {
  Rig r;  // priorities 10 (four pods) and 1000
  auto PreemptionTiers = [&](const cluster::ClusterModel::Reader& reader, int32_t priority) {
    const DomainMap map = DomainMap::FromModel(r.model, testing::SmallLevels());  // every node, "many" too
    return PreemptibleGpus(reader, map, priority, r.lookup).tiers();
  };
  CHECK(PreemptionTiers(r.model.Read(), 1000) == std::vector<int32_t>{1000});
  CHECK(PreemptionTiers(r.model.Read(), 10).empty());
  CHECK(PreemptionTiers(r.model.Read(), 2000) == std::vector<int32_t>{11, 2000});
  for (int i = 0; i < 20; ++i)
    r.model.ApplyPod(MakePod("p" + std::to_string(i), 0, "b2-n1", "", 100 + i));  // no GPUs: not a victim
  CHECK(PreemptionTiers(r.model.Read(), 2000) == std::vector<int32_t>{11, 2000});
  cluster::testing::AddNode(r.model, "many", 32, "", 8, 64);
  for (int i = 0; i < 20; ++i)
    r.model.ApplyPod(MakePod("q" + std::to_string(i), 1, "many", std::to_string(i), 100 + i));
  const std::vector<int32_t> tiers = PreemptionTiers(r.model.Read(), 2000);
  REQUIRE(tiers.size() == kMaxPreemptionTiers);  // 22 cut points, spread
  CHECK(std::is_sorted(tiers.begin(), tiers.end()));
  CHECK(tiers.back() == 2000);
}

TEST_CASE("group coordinator: a group preempts the lowest priorities that make room, not the first block's") {
  testing::CoordinatorRig r(2, 2);
  // Block b1 (first by every order) held at priority 500, block b2 at priority 10.
  for (const char* node : {"b1-n1", "b1-n2"})
    r.model.ApplyPod(MakePod(std::string("mid-") + node, 8, node, "0,1,2,3,4,5,6,7", 500));
  for (const char* node : {"b2-n1", "b2-n2"})
    r.model.ApplyPod(MakePod(std::string("low-") + node, 8, node, "0,1,2,3,4,5,6,7", 10));
  r.Filter(Member("a", "urgent", 1000));
  GroupVerdict v = r.Filter(Member("b", "urgent", 1000));
  CHECK(v.node.starts_with("b2-"));
  CHECK(v.preempted == std::vector<std::string>{"default/pod-low-b2-n1", "default/pod-low-b2-n2"});
}

TEST_CASE("group coordinator: the reason counts a PodGroup disrupted whole as one victim, by name") {
  testing::CoordinatorRig r(2, 2);
  cluster::PodGroupStore store;
  const PodGroupLookup lookup(testing::SmallLevels(), store);
  GroupCoordinator groups(r.pipeline, lookup);
  k8s::PodGroupObject disrupted_whole;
  disrupted_whole.namespace_ = "default";
  disrupted_whole.name = "gang";
  disrupted_whole.min_count = 2;
  disrupted_whole.priority = 10;
  disrupted_whole.disrupted_whole = true;
  store.Put(disrupted_whole);
  auto gang_member = [&](const char* uid, const char* node) {
    k8s::PodObject p = MakePod(uid, 8, node, "0,1,2,3,4,5,6,7", 10);
    p.group_ref.pod_group_name = "gang";
    r.model.ApplyPod(p);
  };
  std::string victims;
  SUBCASE("the gang alone in the way") {  // b1: the gang; b2: a pod of 1000 and a pod of 10
    gang_member("gang-0", "b1-n1");
    gang_member("gang-1", "b1-n2");
    r.model.ApplyPod(MakePod("keeper", 8, "b2-n1", "0,1,2,3,4,5,6,7", 1000));
    r.model.ApplyPod(MakePod("low", 8, "b2-n2", "0,1,2,3,4,5,6,7", 10));
    victims = "1 PodGroup of priority below 1000 (PodGroup default/gang)";
  }
  SUBCASE("a gang and a pod in the way, the gang's other member elsewhere") {  // b1: gang-0, a pod of 10
    gang_member("gang-0", "b1-n1");
    r.model.ApplyPod(MakePod("low", 8, "b1-n2", "0,1,2,3,4,5,6,7", 10));
    r.model.ApplyPod(MakePod("keeper", 8, "b2-n1", "0,1,2,3,4,5,6,7", 1000));
    gang_member("gang-1", "b2-n2");
    victims = "1 PodGroup and 1 pod of priority below 1000 (PodGroup default/gang, default/pod-low)";
  }
  GroupVerdict v;
  for (const char* uid : {"a", "b"}) {
    const k8s::PodObject m = Member(uid, "urgent", 1000);
    r.model.ApplyPod(m);
    v = groups.Filter(cluster::MakePodRequest(m));
  }
  CHECK(v.node.starts_with("b1-"));
  INFO(v.reason);
  CHECK(v.reason.find("block s1/b1 can take them if kube-scheduler preempts " + victims) != std::string::npos);
}

TEST_CASE("group coordinator: a group with no plan is led to where preemption would make room, reserving nothing") {
  Rig r;
  r.Filter(Member("a", "urgent", 1000));
  GroupVerdict b = r.Filter(Member("b", "urgent", 1000));
  GroupVerdict a = r.Filter(Member("a", "urgent", 1000));
  CHECK_FALSE(a.planned_now);
  CHECK(a.reason == "group urgent: no block can take 2 members of 8 GPUs: the best, s1/b2, has room for 1; "
                    "block s1/b1 can take them if kube-scheduler preempts 4 pods of priority below 1000 "
                    "(default/pod-low-0, default/pod-low-1, default/pod-low-2 and 1 more): each member passes its "
                    "node there alone, for kube-scheduler's workload-aware preemption");
  CHECK(b.reason == a.reason);  // one reason for the group: its members do not requeue each other
  CHECK(a.requeue.empty());
  CHECK(a.preempted.size() == 4);
  REQUIRE(a.node.starts_with("b1-"));
  REQUIRE(b.node.starts_with("b1-"));
  CHECK(a.node != b.node);
  CHECK(a.gpus.size() == 8);
  CHECK_FALSE(a.nominate);
  CHECK(r.model.Totals().reserved_gpus == 0);
  CHECK(r.Filter(Member("a", "urgent", 1000)).node == a.node);  // the same trial every time
  // No GPU is given while the low pods hold them: the bind has no slot to hand over.
  CHECK_FALSE(r.groups.Bind(cluster::MakePodRequest(Member("a", "urgent", 1000)), a.node).ok());
  auto groups = r.groups.Groups();
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].state == GroupState::kWaiting);

  // kube-scheduler preempts them; the group is planned there on GPUs really free, and binds.
  for (const char* uid : {"low-0", "low-1", "low-2", "low-3"}) r.model.DeletePod(uid);
  GroupVerdict planned = r.Filter(Member("a", "urgent", 1000));
  CHECK(planned.planned_now);
  CHECK(planned.preempted.empty());
  CHECK(planned.domain == "block s1/b1");
  CHECK(r.model.Totals().reserved_gpus == 16);
  CHECK(r.groups.Bind(cluster::MakePodRequest(Member("a", "urgent", 1000)), planned.node).ok());
}

TEST_CASE("group coordinator: no preemption plan for preemptionPolicy Never, an equal priority, or no room anyway") {
  SUBCASE("Never") {
    Rig r;
    k8s::PodObject a = Member("a", "polite", 1000), b = Member("b", "polite", 1000);
    a.preempt_never = b.preempt_never = true;
    r.Filter(a);
    GroupVerdict v = r.Filter(b);
    CHECK(v.node.empty());
    CHECK(v.preempted.empty());
    CHECK(v.reason == "group polite: no block can take 2 members of 8 GPUs: the best, s1/b2, has room for 1");
  }
  SUBCASE("equal priority") {
    Rig r;
    r.Filter(Member("a", "peer", 10));
    GroupVerdict v = r.Filter(Member("b", "peer", 10));
    CHECK(v.node.empty());
    CHECK(v.preempted.empty());
  }
  SUBCASE("no block has room even then") {
    Rig r;
    k8s::PodObject a = BlockMember("a", "huge", 3), b = BlockMember("b", "huge", 3), c = BlockMember("c", "huge", 3);
    a.priority = b.priority = c.priority = 1000;
    r.Filter(a);
    r.Filter(b);
    GroupVerdict v = r.Filter(c);
    CHECK(v.node.empty());
    CHECK(v.preempted.empty());
    CHECK(v.reason == "group huge: no block can take 3 members of 8 GPUs: the best, s1/b2, has room for 1");
  }
}

}  // namespace
}  // namespace topofit::groups
