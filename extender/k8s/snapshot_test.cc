#include "extender/k8s/snapshot.h"

#include <doctest/doctest.h>

#include "extender/k8s/demo_cluster.h"
#include "extender/k8s/yaml_to_json.h"

namespace topofit::k8s {

TEST_CASE("snapshot: kubectl -o json List of nodes and pods") {
  auto snap = LoadSnapshot(R"({"apiVersion":"v1","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"nvidia.com/gpu":"8"}}},
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"d","uid":"u",
      "annotations":{"topofit.io/gpu-ids":"0,1"}},
     "spec":{"nodeName":"n1","containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}]},
     "status":{"phase":"Running"}},
    {"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}],
    "kind":"List","metadata":{"resourceVersion":""}})");
  REQUIRE_MESSAGE(snap.ok(), (snap.ok() ? "" : snap.error()));
  REQUIRE(snap->nodes.size() == 1);
  REQUIRE(snap->pods.size() == 1);
  CHECK(snap->nodes[0].allocatable_gpus == 8);
  CHECK(snap->pods[0].gpus == 2);
  CHECK(snap->pods[0].meta.annotations.at("topofit.io/gpu-ids") == "0,1");
}

TEST_CASE("snapshot: NodeList without item kinds, single objects, YAML") {
  auto list = LoadSnapshot(R"({"kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
  REQUIRE(list.ok());
  CHECK(list->nodes.size() == 2);
  auto single = LoadSnapshot(R"({"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}})");
  REQUIRE(single.ok());
  CHECK(single->pods.size() == 1);
  auto yaml = LoadSnapshot(R"(apiVersion: v1
kind: List
items:
- kind: Node
  metadata:
    name: y1
    annotations:
      topofit.io/gpu-topology: dgx1-v100
  status:
    allocatable:
      nvidia.com/gpu: 8
- kind: Pod
  metadata: {name: q, namespace: ns}
  spec:
    containers:
    - resources: {limits: {nvidia.com/gpu: "4"}}
)");
  REQUIRE_MESSAGE(yaml.ok(), (yaml.ok() ? "" : yaml.error()));
  CHECK(yaml->nodes[0].meta.annotations.at("topofit.io/gpu-topology") == "dgx1-v100");
  CHECK(yaml->nodes[0].allocatable_gpus == 8);
  CHECK(yaml->pods[0].gpus == 4);
}

TEST_CASE("snapshot: errors name the item") {
  auto bad = LoadSnapshot(R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"ok"}},
    {"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"containers":[
      {"resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}}]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("items[1] pod d/p") == 0);
  CHECK_FALSE(LoadSnapshot("{").ok());
  CHECK_FALSE(LoadSnapshot("kind: List\nitems: [\n").ok());
  CHECK_FALSE(LoadSnapshot(R"({"kind":"ConfigMap"})").ok());
}

TEST_CASE("yaml to json: scalars") {
  auto j = YamlToJson("a: 1\nb: '1'\nc: true\nd: ~\ne: 1e3\nf: 0x10\ng: |\n  x\n  y\n");
  REQUIRE(j.ok());
  CHECK(*j == R"({"a":1,"b":"1","c":true,"d":null,"e":1e3,"f":"0x10","g":"x\ny\n"})");
}

TEST_CASE("demo cluster: loads through the snapshot loader") {
  auto demo = LoadDemoCluster();
  REQUIRE_MESSAGE(demo.ok(), (demo.ok() ? "" : demo.error()));
  CHECK(demo->nodes.size() == 5);
  CHECK(demo->pods.size() == 4);
  int gpus = 0;
  for (const auto& n : demo->nodes) gpus += int(n.allocatable_gpus);
  CHECK(gpus == 36);
  bool has_matrix = false;
  for (const auto& n : demo->nodes) {
    auto it = n.meta.annotations.find(kTopologyAnnotation);
    if (it != n.meta.annotations.end() && it->second.find("GPU0") != std::string::npos) has_matrix = true;
  }
  CHECK(has_matrix);
}

}  // namespace topofit::k8s

namespace topofit::k8s {

TEST_CASE("snapshot: DeviceClasses, ResourceSlices and ResourceClaims beside nodes and pods, streamed alike") {
  const char* text = R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"d1"},"status":{"allocatable":{"cpu":"8"}}},
    {"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu"},
     "spec":{"extendedResourceName":"nvidia.com/gpu"}},
    {"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"d1-gpus"},
     "spec":{"driver":"gpu.nvidia.com","nodeName":"d1","pool":{"name":"d1","resourceSliceCount":1},
             "devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}},
    {"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","namespace":"ml","uid":"cu"},
     "status":{"allocation":{"devices":{"results":[{"request":"r","driver":"gpu.nvidia.com","pool":"d1","device":"gpu-1"}]}}}}]})";
  auto snap = LoadSnapshot(text);
  REQUIRE_MESSAGE(snap.ok(), (snap.ok() ? "" : snap.error()));
  CHECK(snap->nodes.size() == 1);
  REQUIRE(snap->device_classes.size() == 1);
  CHECK(snap->device_classes[0].extended_resource_name == "nvidia.com/gpu");
  REQUIRE(snap->resource_slices.size() == 1);
  CHECK(snap->resource_slices[0].devices.size() == 2);
  REQUIRE(snap->resource_claims.size() == 1);
  CHECK(snap->resource_claims[0].results[0].device == "gpu-1");

  int slices = 0, claims = 0;
  SnapshotSink sink{[](NodeObject&&) {}, [](PodObject&&) {}, nullptr,
                    [&](ResourceSliceObject&&) { ++slices; }, [&](ResourceClaimObject&&) { ++claims; }, nullptr};
  REQUIRE(StreamSnapshot(text, sink).ok());  // A kind without a function is skipped.
  CHECK(slices == 1);
  CHECK(claims == 1);

  auto typed = LoadSnapshot(R"({"kind":"ResourceSliceList","items":[{"metadata":{"name":"s"},"spec":{"devices":[]}}]})");
  REQUIRE(typed.ok());
  CHECK(typed->resource_slices.size() == 1);
  auto bad = LoadSnapshot(R"({"kind":"List","items":[{"kind":"ResourceSlice","metadata":{"name":"s"},"spec":{"devices":{}}}]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error() == "items[0] resourceslice s: spec.devices: expected an array");
}

}  // namespace topofit::k8s
