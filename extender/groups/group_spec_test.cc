#include "extender/groups/group_spec.h"

#include <doctest/doctest.h>

#include "extender/cluster/testing/builders.h"

namespace topofit::groups {
namespace {

using cluster::testing::MakePod;
using Annotations = std::map<std::string, std::string>;

const DomainLevels kLevels = DomainLevels::Defaults();

using cluster::testing::MakePodGroup;

TEST_CASE("group spec: a pod without group annotations is no group member") {
  auto r = ParseGroupAnnotations({{k8s::kMinLinkAnnotation, "NV"}}, kLevels);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  auto spec = GroupFromAnnotations(cluster::MakePodRequest(MakePod("u", 8)), {}, kLevels);
  REQUIRE(spec.ok());
  CHECK_FALSE(spec->has_value());
}

TEST_CASE("group spec: defaults - one member, min-count = size, preferred at the host level") {
  auto r = ParseGroupAnnotations({{kGroupAnnotation, " train-1 "}, {kGroupSizeAnnotation, "8"}}, kLevels);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK((*r)->name == "train-1");
  CHECK((*r)->size == 8);
  CHECK_FALSE((*r)->min_count.has_value());
  CHECK((*r)->level == 4);
  CHECK((*r)->policy == LevelPolicy::kPreferred);

  Annotations a = {{kGroupAnnotation, "train-1"}, {kGroupSizeAnnotation, "8"}, {kGroupMinCountAnnotation, "6"},
                   {kGroupLevelAnnotation, "network.topology.nvidia.com/block"}, {kGroupPolicyAnnotation, "Required"},
                   {k8s::kTopologyPolicyAnnotation, "required"}};
  auto pod = MakePod("u1", 8, "", "", 0, a);
  pod.meta.namespace_ = "ml";
  auto spec = GroupFromAnnotations(cluster::MakePodRequest(pod), pod.meta.annotations, kLevels);
  REQUIRE(spec.ok());
  REQUIRE(spec->has_value());
  const GroupSpec& g = **spec;
  CHECK(g.key() == "ml/train-1");
  CHECK(g.size == 8);
  CHECK(g.min_count == 6);
  CHECK(g.gpus == 8);
  CHECK(g.level == 2);  // the key names the block level
  CHECK(g.policy == LevelPolicy::kRequired);
  CHECK(g.intent.policy == cluster::TopologyPolicy::kRequired);  // each member's set rule
}

TEST_CASE("group spec: invalid values are errors naming the annotation, the value and the choices") {
  auto size = ParseGroupAnnotations({{kGroupAnnotation, "g"}, {kGroupSizeAnnotation, "eight"}}, kLevels);
  REQUIRE_FALSE(size.ok());
  CHECK(size.error() == "invalid topofit.io/group-size 'eight': expected a whole number 1..10000");
  CHECK(ParseGroupAnnotations({{kGroupAnnotation, "g"}, {kGroupSizeAnnotation, "0"}}, kLevels).error() ==
        "invalid topofit.io/group-size '0': expected a whole number 1..10000");
  CHECK(ParseGroupAnnotations({{kGroupAnnotation, "g"}, {kGroupSizeAnnotation, "4"}, {kGroupMinCountAnnotation, "5"}},
                              kLevels)
            .error() == "invalid topofit.io/group-min-count '5': more than the group's size 4");
  CHECK(ParseGroupAnnotations({{kGroupAnnotation, "g"}, {kGroupLevelAnnotation, "rack"}}, kLevels).error() ==
        "invalid topofit.io/group-level 'rack': expected a level (datacenter, spine, block, accelerator, host) "
        "or one of their label keys");
  CHECK(ParseGroupAnnotations({{kGroupAnnotation, "g"}, {kGroupPolicyAnnotation, "strict"}}, kLevels).error() ==
        "invalid topofit.io/group-policy 'strict': expected required or preferred");
  CHECK(ParseGroupAnnotations({{kGroupAnnotation, " "}}, kLevels).error() ==
        "invalid topofit.io/group ' ': expected a group name");
  CHECK(ParseGroupAnnotations({{kGroupSizeAnnotation, "4"}}, kLevels).error() ==
        "topofit.io/group-size without topofit.io/group: the pod names no group");
  auto two = ParseGroupAnnotations({{kGroupAnnotation, "g"}, {kGroupSizeAnnotation, "x"}, {kGroupPolicyAnnotation, "y"}},
                                   kLevels);
  REQUIRE_FALSE(two.ok());
  CHECK(two.error() == "invalid topofit.io/group-size 'x': expected a whole number 1..10000; "
                       "invalid topofit.io/group-policy 'y': expected required or preferred");
}

TEST_CASE("group spec: the member's own invalid topology annotations make the group invalid") {
  Annotations a = {{kGroupAnnotation, "g"}, {k8s::kMinLinkAnnotation, "fast"}};
  auto pod = MakePod("u", 2, "", "", 0, a);
  auto spec = GroupFromAnnotations(cluster::MakePodRequest(pod), pod.meta.annotations, kLevels);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.error() == "invalid topofit.io/min-link 'fast': expected NV, PIX, PXB, PHB, NODE or SYS");
}

TEST_CASE("group spec: from a Workload API PodGroup - gang minCount, size from the members seen") {
  auto pod = MakePod("u", 4, "", "", 0, {{kGroupLevelAnnotation, "accelerator"}, {kGroupPolicyAnnotation, "required"}});
  pod.meta.namespace_ = "ml";
  auto member = cluster::MakePodRequest(pod);
  k8s::PodGroupObject pg = MakePodGroup(k8s::PodGroupObject::Api::kWorkload, "ml", "worker-0", 6);
  k8s::WorkloadGroupRef ref{"worker-0", ""};
  auto spec = GroupFromPodGroup(member, ref, pg, 4, pod.meta.annotations, kLevels);
  REQUIRE(spec.ok());
  CHECK(spec->key() == "ml/worker-0");
  CHECK(spec->min_count == 6);
  CHECK(spec->size == 6);  // only 4 seen yet: the gang's minimum is the size known
  CHECK(spec->gpus == 4);
  CHECK(spec->level == 3);
  CHECK(spec->policy == LevelPolicy::kRequired);
  CHECK(GroupFromPodGroup(member, ref, pg, 9, pod.meta.annotations, kLevels)->size == 9);
  // The priority preemption uses: the PodGroup's when it has one, else the member's.
  CHECK(spec->priority == 0);
  member.priority = 50;
  CHECK(GroupFromPodGroup(member, ref, pg, 4, pod.meta.annotations, kLevels)->priority == 50);
  k8s::PodGroupObject ranked = pg;
  ranked.priority = 1000;
  CHECK(GroupFromPodGroup(member, ref, ranked, 4, pod.meta.annotations, kLevels)->priority == 1000);
  member.priority = 0;

  k8s::PodGroupObject basic = pg;
  basic.policy = k8s::PodGroupObject::Policy::kBasic;
  basic.min_count = 0;
  auto b = GroupFromPodGroup(member, ref, basic, 3, pod.meta.annotations, kLevels);
  REQUIRE(b.ok());
  CHECK(b->min_count == 1);
  CHECK(b->size == 3);
}

TEST_CASE("group spec: from a coscheduling PodGroup, and the mismatches that are errors") {
  auto pod = MakePod("u", 8);
  auto member = cluster::MakePodRequest(pod);  // namespace "default"
  k8s::PodGroupObject pg = MakePodGroup(k8s::PodGroupObject::Api::kCoscheduling, "default", "pg1", 2);
  auto ok = GroupFromPodGroup(member, {"", "pg1"}, pg, 2, {}, kLevels);
  REQUIRE(ok.ok());
  CHECK(ok->level == 4);
  CHECK(ok->policy == LevelPolicy::kPreferred);

  CHECK(GroupFromPodGroup(member, {"pg1", ""}, pg, 2, {}, kLevels).error() ==
        "pod default/pod-u does not name PodGroup default/pg1");  // the label, not the Workload field, names it
  pg.min_count = 0;
  CHECK(GroupFromPodGroup(member, {"", "pg1"}, pg, 2, {}, kLevels).error() ==
        "PodGroup default/pg1: spec.minMember 0 is not 1..10000");
  pg.min_count = 10001;
  CHECK(GroupFromPodGroup(member, {"", "pg1"}, pg, 2, {}, kLevels).error() ==
        "PodGroup default/pg1: spec.minMember 10001 is not 1..10000");
  pg.min_count = 2;
  CHECK(GroupFromPodGroup(member, {"", "pg1"}, pg, 2, {{kGroupPolicyAnnotation, "x"}}, kLevels).error() ==
        "invalid topofit.io/group-policy 'x': expected required or preferred");
  CHECK(GroupFromPodGroup(member, {"", "pg1"}, pg, 2, {{kGroupAnnotation, "other"}, {kGroupSizeAnnotation, "4"}},
                          kLevels).error() ==
        "topofit.io/group 'other' names another group than the pod's PodGroup default/pg1; "
        "topofit.io/group-size: the pod's PodGroup default/pg1 states its members (spec.minMember); remove the "
        "annotation");
  CHECK(GroupFromPodGroup(member, {"", "pg1"}, pg, 2, {{kGroupAnnotation, "pg1"}}, kLevels).ok());  // the same name
}

TEST_CASE("group spec: a Workload PodGroup's topology key is its level, required") {
  auto pod = MakePod("u", 8);
  auto member = cluster::MakePodRequest(pod);
  k8s::PodGroupObject pg = MakePodGroup(k8s::PodGroupObject::Api::kWorkload, "default", "t", 2);
  pg.topology_key = "network.topology.nvidia.com/block";
  auto spec = GroupFromPodGroup(member, {"t", ""}, pg, 2, {}, kLevels);
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error()));
  CHECK(kLevels.levels[spec->level].name == "block");
  CHECK(spec->policy == LevelPolicy::kRequired);
  auto annotated = GroupFromPodGroup(member, {"t", ""}, pg, 2, {{kGroupPolicyAnnotation, "preferred"}}, kLevels);
  REQUIRE(annotated.ok());
  CHECK(annotated->policy == LevelPolicy::kPreferred);  // the pod's annotations win
  pg.topology_key = "example.com/row";
  auto unknown = GroupFromPodGroup(member, {"t", ""}, pg, 2, {}, kLevels);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().find("PodGroup default/t: spec.schedulingConstraints.topology key 'example.com/row' is the "
                             "label of no level") == 0);
}

}  // namespace
}  // namespace topofit::groups
