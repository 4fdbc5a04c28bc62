// PodGroupLookup through the GroupCoordinator: Workload API and coscheduling PodGroup members held until
// their PodGroup is known and min-count members are there, then planned whole; an annotation group
// beside them unchanged; kube-scheduler's gang cycle (members filtered while the earlier ones are only
// assumed, the whole cycle thrown away and repeated) keeps every member's slot.
#include "extender/groups/pod_group_lookup.h"

#include <set>

#include <doctest/doctest.h>

#include "extender/groups/group_coordinator.h"
#include "extender/groups/testing/small_clusters.h"

namespace topofit::groups {
namespace {

using Api = k8s::PodGroupObject::Api;

k8s::PodObject WorkloadMember(const std::string& uid, const std::string& group) {
  k8s::PodObject p = cluster::testing::MakePod(uid, 8, "", "", 0, {{"topofit.io/group-level", "block"}});
  p.group_ref.pod_group_name = group;
  return p;
}

k8s::PodObject CoschedulingMember(const std::string& uid, const std::string& group) {
  k8s::PodObject p = cluster::testing::MakePod(uid, 8);
  p.meta.labels[k8s::kCoschedulingPodGroupLabel] = group;
  p.group_ref.coscheduling_pod_group = group;
  return p;
}

k8s::PodGroupObject Gang(Api api, const std::string& name, int32_t min_count) {
  return cluster::testing::MakePodGroup(api, "default", name, min_count);
}

struct Rig {
  cluster::FakeClock clock;
  cluster::ClusterModel model{cluster::ModelOptions{.clock = &clock}};
  placement::Pipeline pipeline{&model};
  cluster::PodGroupStore store;
  PodGroupLookup lookup{testing::SmallLevels(), store};
  GroupCoordinator groups{pipeline, lookup};
  Rig() { testing::AddNodes(model, testing::Blocks(3, 2), "hgx-h100-8", 8); }
  GroupVerdict Filter(const k8s::PodObject& pod) {
    model.ApplyPod(pod);
    return groups.Filter(cluster::MakePodRequest(pod));
  }
};

}  // namespace

TEST_CASE("pod group lookup: a Workload API member is held until its PodGroup is known, then planned whole") {
  Rig r;
  GroupVerdict v = r.Filter(WorkloadMember("w1", "train"));
  CHECK(v.member);
  CHECK(v.key == "default/train");
  CHECK(v.node.empty());
  CHECK(v.reason == "group train: PodGroup default/train not found yet");
  r.store.Put(Gang(Api::kWorkload, "train", 2));
  v = r.Filter(WorkloadMember("w1", "train"));
  CHECK(v.reason == "group train: 1 of 2 pods created");
  GroupVerdict second = r.Filter(WorkloadMember("w2", "train"));
  REQUIRE_FALSE(second.node.empty());
  CHECK(second.planned_now);
  CHECK(second.domain.rfind("block ", 0) == 0);
  GroupVerdict first = r.Filter(WorkloadMember("w1", "train"));
  REQUIRE_FALSE(first.node.empty());
  CHECK(first.node != second.node);
  CHECK(first.node.substr(0, 2) == second.node.substr(0, 2));  // One block, as topofit.io/group-level asks.
  CHECK(r.model.Totals().reserved_gpus == 16);
}

TEST_CASE("pod group lookup: a coscheduling member, and an annotation group beside PodGroup groups") {
  Rig r;
  GroupVerdict held = r.Filter(CoschedulingMember("c1", "ray"));
  CHECK(held.reason == "group ray: PodGroup default/ray (scheduling.x-k8s.io) not found yet");
  r.store.Put(Gang(Api::kWorkload, "ray", 1));  // A Workload PodGroup of the same name is another object.
  CHECK(r.Filter(CoschedulingMember("c1", "ray")).reason == held.reason);
  r.store.Put(Gang(Api::kCoscheduling, "ray", 2));
  CHECK(r.Filter(CoschedulingMember("c1", "ray")).reason == "group ray: 1 of 2 pods created");
  CHECK_FALSE(r.Filter(CoschedulingMember("c2", "ray")).node.empty());

  k8s::PodObject annotated = cluster::testing::MakePod(
      "a1", 8, "", "", 0, {{"topofit.io/group", "mine"}, {"topofit.io/group-size", "2"}});
  CHECK(r.Filter(annotated).reason == "group mine: 1 of 2 pods created");
  annotated.meta.uid = "a2";
  annotated.meta.name = "pod-a2";
  CHECK_FALSE(r.Filter(annotated).node.empty());
  CHECK(r.model.Totals().reserved_gpus == 32);

  GroupVerdict single = r.Filter(cluster::testing::MakePod("s", 8));
  CHECK_FALSE(single.member);  // A pod of no group is placed as before.
}

TEST_CASE("pod group lookup: kube-scheduler's gang cycle - members filtered while earlier ones are only assumed, "
          "the cycle thrown away and repeated - keeps one slot per member and plans once") {
  Rig r;
  r.store.Put(Gang(Api::kWorkload, "gang", 4));
  std::vector<k8s::PodObject> members;
  for (int i = 0; i < 4; ++i) members.push_back(WorkloadMember("g" + std::to_string(i), "gang"));
  for (const auto& m : members) r.model.ApplyPod(m);  // The watch saw all four before the cycle.
  std::map<std::string, std::string> slot;  // uid -> node, from the first cycle
  int planned = 0;
  for (int cycle = 0; cycle < 3; ++cycle) {
    for (const auto& m : members) {  // No bind in between: kube-scheduler only assumes each member.
      GroupVerdict v = r.Filter(m);
      REQUIRE_FALSE(v.node.empty());
      planned += v.planned_now;
      if (cycle == 0) slot[m.meta.uid] = v.node;
      CHECK(slot[m.meta.uid] == v.node);
    }
  }
  CHECK(planned == 1);
  std::set<std::string> nodes;
  for (const auto& [uid, node] : slot) nodes.insert(node);
  CHECK(nodes.size() == 4);  // 4 members of 8 GPUs: one whole node each
  CHECK(r.model.Totals().reserved_gpus == 32);
}

}  // namespace topofit::groups
