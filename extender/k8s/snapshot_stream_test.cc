// The streaming snapshot loaders against the whole-document one (LoadSnapshot) on the same input.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "extender/k8s/demo_cluster.h"
#include "extender/k8s/snapshot.h"
#include "extender/k8s/testing/busy_cluster.h"
#include "test/util/temp_dir.h"

namespace topofit::k8s {
namespace {

void CheckSameMeta(const ObjectMeta& a, const ObjectMeta& b) {
  CHECK(a.name == b.name);
  CHECK(a.namespace_ == b.namespace_);
  CHECK(a.uid == b.uid);
  CHECK(a.resource_version == b.resource_version);
  CHECK(a.labels == b.labels);
  CHECK(a.annotations == b.annotations);
  CHECK(a.deleting == b.deleting);
}

void CheckSame(const Snapshot& a, const Snapshot& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  REQUIRE(a.pods.size() == b.pods.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeObject &x = a.nodes[i], &y = b.nodes[i];
    CheckSameMeta(x.meta, y.meta);
    CHECK(x.allocatable_gpus == y.allocatable_gpus);
    CHECK(x.capacity_gpus == y.capacity_gpus);
    CHECK(x.unschedulable == y.unschedulable);
    CHECK(x.allocatable_cpu_milli == y.allocatable_cpu_milli);
    CHECK(x.allocatable_memory_bytes == y.allocatable_memory_bytes);
  }
  for (size_t i = 0; i < a.pods.size(); ++i) {
    const PodObject &x = a.pods[i], &y = b.pods[i];
    CheckSameMeta(x.meta, y.meta);
    CHECK(x.gpus == y.gpus);
    CHECK(x.cpu_milli == y.cpu_milli);
    CHECK(x.memory_bytes == y.memory_bytes);
    CHECK(x.node_name == y.node_name);
    CHECK(x.scheduler_name == y.scheduler_name);
    CHECK(x.phase == y.phase);
    CHECK(x.priority == y.priority);
  }
}

Result<Snapshot> Streamed(std::string_view text) {
  Snapshot out;
  SnapshotSink sink{[&](NodeObject&& n) { out.nodes.push_back(std::move(n)); },
                    [&](PodObject&& p) { out.pods.push_back(std::move(p)); }, nullptr, nullptr, nullptr, nullptr};
  if (Status s = StreamSnapshot(text, sink); !s.ok()) return Error{s.error()};
  return out;
}

Result<Snapshot> StreamedFromFile(std::string_view text) {
  topofit::testing::TempDir dir;
  auto snap = LoadSnapshotFile(dir.Write("snapshot.json", text));
  if (!snap) {
    // Errors carry the path: compare what follows it.
    std::string e = snap.error();
    return Error{e.substr(e.find(": ") + 2)};
  }
  return snap;
}

// kubectl's order (apiVersion, items, kind, metadata), nodes then pods; also pods first.
std::string BigList(int nodes, bool pods_first) {
  std::vector<std::string> node_items, pod_items;
  for (int i = 0; i < nodes; ++i) node_items.push_back(R"({"apiVersion":"v1","kind":"Node",)" + testing::RealisticNode(i).substr(1));
  for (int i = 0; i < nodes; ++i) {
    pod_items.push_back(fmt::format(
        R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p{0}","namespace":"ns","uid":"u{0}","annotations":{{"topofit.io/gpu-ids":"{1}"}},"labels":{{"a":"b"}}}},"spec":{{"nodeName":"{2}","priority":{0},"containers":[{{"name":"c","resources":{{"requests":{{"cpu":"1500m","memory":"1Gi"}},"limits":{{"nvidia.com/gpu":"2"}}}}}}]}},"status":{{"phase":"Running"}}}})",
        i, i % 2 ? "0,1" : "4,5", testing::Ec2NodeName(i)));
  }
  std::string items;
  auto add = [&](const std::vector<std::string>& v) {
    for (const auto& s : v) items += (items.empty() ? "" : ",\n") + s;
  };
  if (pods_first) add(pod_items), add(node_items);
  else add(node_items), add(pod_items);
  return R"({"apiVersion":"v1","items":[)" + items + R"(],"kind":"List","metadata":{"resourceVersion":""}})";
}

}  // namespace

TEST_CASE("snapshot stream: the same objects as the whole-document loader") {
  std::vector<std::string> inputs = {
      BigList(300, false),
      BigList(50, true),
      // Kind-less items with the List's kind after them (they wait for it), and before them.
      R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"kind":"NodeList"})",
      R"({"kind":"PodList","items":[{"metadata":{"name":"p","uid":"u"},"spec":{"containers":[]}}]})",
      // Mixed: own kinds and kind-less, other kinds skipped, a List of unknown kind with items.
      R"({"items":[{"kind":"Service"},{"metadata":{"name":"x"}},{"kind":"Node","metadata":{"name":"y"}}],"kind":"NodeList"})",
      R"({"kind":"Whatever","items":[{"kind":"Node","metadata":{"name":"z"}}]})",
      // One object, not a List; with keys in another case.
      R"({"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})",
      R"({"KIND":"Node","Metadata":{"name":"n"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}})",
      R"({"kind":"List","items":null})",
      R"({"kind":"List","items":[]})",
      // YAML.
      "kind: List\nitems:\n- kind: Node\n  metadata: {name: y1}\n  status: {allocatable: {nvidia.com/gpu: 8}}\n",
  };
  for (const std::string& text : inputs) {
    INFO(text.substr(0, 200));
    auto whole = LoadSnapshot(text);
    REQUIRE_MESSAGE(whole.ok(), whole.error());
    auto streamed = Streamed(text);
    REQUIRE_MESSAGE(streamed.ok(), streamed.error());
    CheckSame(*whole, *streamed);
    auto from_file = StreamedFromFile(text);
    REQUIRE_MESSAGE(from_file.ok(), from_file.error());
    CheckSame(*whole, *from_file);
  }
  CHECK(Streamed(inputs[0])->pods.size() == 300);
}

TEST_CASE("snapshot stream: the demo cluster") {
  auto demo = LoadDemoCluster();
  REQUIRE(demo.ok());
  auto streamed = Streamed(DemoClusterYaml());
  REQUIRE_MESSAGE(streamed.ok(), streamed.error());
  CheckSame(*demo, *streamed);
}

TEST_CASE("snapshot stream: the same errors for valid JSON, byte offsets for broken JSON") {
  for (std::string_view text : {
           R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"ok"}},{"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}}]})",
           R"({"kind":"ConfigMap"})",
           R"({"apiVersion":"v1"})",
           R"({"kind":"List","items":[1]})",
           R"({"kind":"List","items":{"a":1}})",
           R"({"kind":"Node","metadata":[]})",
       }) {
    INFO(text);
    auto whole = LoadSnapshot(text);
    REQUIRE_FALSE(whole.ok());
    auto streamed = Streamed(text);
    REQUIRE_FALSE(streamed.ok());
    CHECK(streamed.error() == whole.error());
    auto from_file = StreamedFromFile(text);
    REQUIRE_FALSE(from_file.ok());
    CHECK(from_file.error() == whole.error());
  }
  // Broken JSON: refused by both, the stream naming where.
  for (std::string_view text : {R"({"kind":"List","items":[{"kind":"Node"} {}]})", R"({"kind":"List","items":[{"a":tru}]})",
                                R"({"kind":"List","metadata":{,"items":[]})", "{"}) {
    INFO(text);
    CHECK_FALSE(LoadSnapshot(text).ok());
    auto streamed = Streamed(text);
    REQUIRE_FALSE(streamed.ok());
    CHECK(streamed.error().find("invalid JSON") != std::string::npos);
  }
  auto missing = LoadSnapshotFile("/nonexistent/snapshot.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("cannot open /nonexistent/snapshot.json") == 0);
}

}  // namespace topofit::k8s
