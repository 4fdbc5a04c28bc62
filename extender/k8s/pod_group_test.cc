#include "extender/k8s/pod_group.h"

#include <doctest/doctest.h>

#include "extender/k8s/object_decoder.h"
#include "extender/k8s/snapshot.h"

namespace topofit::k8s {
namespace {

// As kube-apiserver v1.36.3 returns a Workload API PodGroup (GET .../scheduling.k8s.io/v1alpha2/...).
constexpr const char* kWorkloadPodGroup = R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup",
  "metadata":{"name":"train-7","namespace":"ml","uid":"pg-uid-1","resourceVersion":"812",
    "creationTimestamp":"2026-11-27T17:00:00Z"},
  "spec":{"podGroupTemplateRef":{"workload":{"workloadName":"train","podGroupTemplateName":"workers"}},
    "schedulingPolicy":{"gang":{"minCount":4}},
    "schedulingConstraints":{"topology":[{"key":"network.topology.nvidia.com/block"}]},
    "disruptionMode":"PodGroup","priorityClassName":"high"},
  "status":{"conditions":[{"type":"PodGroupScheduled","status":"False","reason":"Unschedulable",
    "message":"","lastTransitionTime":"2026-11-27T17:00:01Z"}]}})";

// As scheduler-plugins' CRD stores a coscheduling PodGroup.
constexpr const char* kCoschedulingPodGroup = R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",
  "metadata":{"name":"ray-head-group","namespace":"ray","uid":"pg-uid-2"},
  "spec":{"minMember":3,"scheduleTimeoutSeconds":10,"minResources":{"nvidia.com/gpu":"24","cpu":"3"}},
  "status":{"phase":"Pending","running":0}})";

}  // namespace

TEST_CASE("pod group: a Workload API PodGroup") {
  auto g = DecodePodGroup(kWorkloadPodGroup, PodGroupObject::Api::kCoscheduling);  // apiVersion decides
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error()));
  CHECK(g->api == PodGroupObject::Api::kWorkload);
  CHECK(g->key() == "ml/train-7");
  CHECK(g->uid == "pg-uid-1");
  CHECK(g->policy == PodGroupObject::Policy::kGang);
  CHECK(g->min_count == 4);
  CHECK(g->topology_key == "network.topology.nvidia.com/block");
  CHECK_FALSE(g->priority);  // Without the WorkloadAwarePreemption gate kube-apiserver sets none.
  CHECK(g->disrupted_whole);
  auto ranked = DecodePodGroup(R"({"metadata":{"name":"r","namespace":"ml"},
    "spec":{"schedulingPolicy":{"gang":{"minCount":2}},"priorityClassName":"high","priority":1000}})",
                               PodGroupObject::Api::kWorkload);
  REQUIRE(ranked.ok());
  CHECK(ranked->priority == 1000);
  CHECK_FALSE(ranked->disrupted_whole);  // disruptionMode absent: Pod
  auto basic = DecodePodGroup(R"({"metadata":{"name":"b","namespace":"ml"},"spec":{"schedulingPolicy":{"basic":{}}}})",
                              PodGroupObject::Api::kWorkload);
  REQUIRE(basic.ok());
  CHECK(basic->policy == PodGroupObject::Policy::kBasic);
  CHECK(basic->topology_key.empty());
}

TEST_CASE("pod group: a coscheduling PodGroup, and a List item without apiVersion takes the watched API") {
  auto g = DecodePodGroup(kCoschedulingPodGroup, PodGroupObject::Api::kWorkload);
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error()));
  CHECK(g->api == PodGroupObject::Api::kCoscheduling);
  CHECK(g->key() == "ray/ray-head-group");
  CHECK(g->policy == PodGroupObject::Policy::kGang);
  CHECK(g->min_count == 3);
  auto item = DecodePodGroup(R"({"metadata":{"name":"x","namespace":"n"},"spec":{"minMember":2}})",
                             PodGroupObject::Api::kCoscheduling);
  REQUIRE(item.ok());
  CHECK(item->api == PodGroupObject::Api::kCoscheduling);
  CHECK(item->min_count == 2);
  auto no_min = DecodePodGroup(R"({"metadata":{"name":"x","namespace":"n"}})", PodGroupObject::Api::kCoscheduling);
  REQUIRE(no_min.ok());
  CHECK(no_min->min_count == 0);
}

TEST_CASE("pod group: bad objects are errors naming the object and the field") {
  using Api = PodGroupObject::Api;
  auto neither = DecodePodGroup(R"({"metadata":{"name":"t","namespace":"ml"},"spec":{"schedulingPolicy":{}}})",
                                Api::kWorkload);
  REQUIRE_FALSE(neither.ok());
  CHECK(neither.error() == "podgroup ml/t: spec.schedulingPolicy: states neither basic nor gang");
  auto huge = DecodePodGroup(R"({"metadata":{"name":"t","namespace":"ml"},
    "spec":{"schedulingPolicy":{"gang":{"minCount":4294967296}}}})", Api::kWorkload);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().find("spec.schedulingPolicy.gang.minCount") != std::string::npos);
  auto negative = DecodePodGroup(R"({"metadata":{"name":"t","namespace":"ml"},"spec":{"minMember":-1}})",
                                 Api::kCoscheduling);
  CHECK_FALSE(negative.ok());
  auto other = DecodePodGroup(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","metadata":{"name":"t"}})",
                              Api::kWorkload);
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().find("unsupported PodGroup apiVersion 'scheduling.volcano.sh/v1beta1'") != std::string::npos);
  CHECK_FALSE(DecodePodGroup(R"({"metadata":{"name":"t"}})", Api::kWorkload).ok());  // no spec
  CHECK_FALSE(DecodePodGroup(R"({"spec":{"schedulingPolicy":{"gang":{"minCount":"four"}}}})", Api::kWorkload).ok());
  CHECK_FALSE(DecodePodGroup("[]", Api::kWorkload).ok());
  CHECK_FALSE(DecodePodGroup(R"({"spec":)", Api::kWorkload).ok());
}

TEST_CASE("pod group: a member pod's reference, from the Workload API field and the coscheduling label") {
  auto workload = DecodePod(R"({"metadata":{"name":"w-0","namespace":"ml","uid":"u0"},
    "spec":{"schedulingGroup":{"podGroupName":"train-7"},
      "containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}})");
  REQUIRE(workload.ok());
  CHECK(workload->group_ref.pod_group_name == "train-7");
  CHECK(workload->group_ref.coscheduling_pod_group.empty());
  auto cosched = DecodePod(R"({"metadata":{"name":"r-0","namespace":"ray","uid":"u1",
    "labels":{"scheduling.x-k8s.io/pod-group":"ray-head-group","ray.io/node-type":"worker"}},
    "spec":{"containers":[{"name":"c"}]}})");
  REQUIRE(cosched.ok());
  CHECK(cosched->group_ref.coscheduling_pod_group == "ray-head-group");
  CHECK(cosched->group_ref.pod_group_name.empty());
  auto none = DecodePod(R"({"metadata":{"name":"p"},"spec":{"schedulingGroup":null}})");
  REQUIRE(none.ok());
  CHECK(none->group_ref.empty());
}

TEST_CASE("pod group: GroupNameOf - the Workload API, then coscheduling, then topofit.io/group") {
  const std::map<std::string, std::string> annotated = {{"topofit.io/group", "mine"}};
  CHECK(GroupNameOf({}, {}).empty());
  CHECK(GroupNameOf({}, annotated) == "mine");
  CHECK(GroupNameOf({"", "cos"}, annotated) == "cos");
  CHECK(GroupNameOf({"wl", "cos"}, annotated) == "wl");
}

TEST_CASE("pod group: snapshots carry PodGroups of both APIs, whole and streamed") {
  const std::string list = std::string(R"({"kind":"List","items":[)") + kWorkloadPodGroup + "," +
                           kCoschedulingPodGroup + R"(,{"kind":"Pod","metadata":{"name":"w-0","namespace":"ml"},
    "spec":{"schedulingGroup":{"podGroupName":"train-7"}}}]})";
  auto whole = LoadSnapshot(list);
  REQUIRE_MESSAGE(whole.ok(), (whole.ok() ? "" : whole.error()));
  REQUIRE(whole->pod_groups.size() == 2);
  CHECK(whole->pod_groups[0].api == PodGroupObject::Api::kWorkload);
  CHECK(whole->pod_groups[1].api == PodGroupObject::Api::kCoscheduling);
  REQUIRE(whole->pods.size() == 1);
  CHECK(whole->pods[0].group_ref.pod_group_name == "train-7");
  std::vector<PodGroupObject> streamed;
  SnapshotSink sink{[](NodeObject&&) {}, [](PodObject&&) {}, nullptr, nullptr, nullptr,
                    [&](PodGroupObject&& g) { streamed.push_back(std::move(g)); }};
  REQUIRE(StreamSnapshot(list, sink).ok());
  CHECK(streamed == whole->pod_groups);
  auto one = LoadSnapshot(kCoschedulingPodGroup);  // A single object.
  REQUIRE(one.ok());
  REQUIRE(one->pod_groups.size() == 1);
  CHECK(one->pod_groups[0].min_count == 3);
  auto yaml = LoadSnapshot("kind: List\nitems:\n- apiVersion: scheduling.k8s.io/v1alpha2\n  kind: PodGroup\n"
                           "  metadata: {name: g, namespace: ml}\n  spec:\n    schedulingPolicy:\n"
                           "      gang: {minCount: 2}\n");
  REQUIRE_MESSAGE(yaml.ok(), (yaml.ok() ? "" : yaml.error()));
  REQUIRE(yaml->pod_groups.size() == 1);
  CHECK(yaml->pod_groups[0].min_count == 2);
  auto bad = LoadSnapshot(R"({"kind":"List","items":[{"kind":"PodGroup","metadata":{"name":"g","namespace":"ml"},
    "spec":{"schedulingPolicy":{}}}]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("items[0] podgroup ml/g: spec.schedulingPolicy") != std::string::npos);
}

}  // namespace topofit::k8s
