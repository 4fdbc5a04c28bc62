// The reconciler's pure decisions: gpu-actual from kubelet's truth by UID, mismatches and their
// detail, when to publish, the health annotation.
#include "extender/node/plugin/reconciler.h"

#include <doctest/doctest.h>

#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {

using testing::Decoded;
using testing::Gpus;

TEST_CASE("reconciler: actual by UID, a mismatch named per container, foreign and unknown pods") {
  testing::TestPod old{"job", "old", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 1, Gpus({0})}}};
  old.deleting = true;
  std::vector<NodePod> pods = {
      Decoded(old),
      Decoded({"job", "new", "n1", "n1", "2026-11-23T00:01:00Z", 0, {{"c", 2, Gpus({1, 2})}, {"d", 1, Gpus({3})}}}),
      Decoded({"foreign", "uf", "n1", ""})};
  std::vector<PodDevices> truth = {
      {"default", "job", {{"c", Gpus({2, 1})}, {"d", Gpus({4})}}},
      {"default", "foreign", {{"x", Gpus({5})}}},
      {"default", "static-pod", {{"x", Gpus({6})}}},
      {"default", "cpu-only", {}}};
  auto reports = ComputeActuals("n1", pods, truth, 1795000000);
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].pod->uid == "new");
  CHECK(k8s::EncodeGpuAssignment(reports[0].actual) ==
        R"({"v":1,"node":"n1","containers":{"c":["GPU-0001","GPU-0002"],"d":["GPU-0004"]},"t":1795000000})");
  CHECK(reports[0].mismatch);
  CHECK(reports[0].detail == "d: planned GPU-0003, holds GPU-0004");
  CHECK(reports[1].pod->uid == "uf");
  CHECK_FALSE(reports[1].mismatch);
}

TEST_CASE("reconciler: a container not admitted yet is no mismatch, and publishing happens only on a change") {
  std::vector<NodePod> pods = {
      Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"a", 1, Gpus({0})}, {"b", 1, Gpus({1})}}})};
  auto reports = ComputeActuals("n1", pods, {{"default", "p", {{"a", Gpus({0})}}}}, 5);
  REQUIRE(reports.size() == 1);
  CHECK_FALSE(reports[0].mismatch);
  CHECK(NeedsPublish(reports[0]));
  pods[0].actual = reports[0].actual;
  pods[0].actual->unix_seconds = 1;  // Published earlier: the time alone is no change.
  reports = ComputeActuals("n1", pods, {{"default", "p", {{"a", Gpus({0})}}}}, 9);
  CHECK_FALSE(NeedsPublish(reports[0]));
  reports = ComputeActuals("n1", pods, {{"default", "p", {{"a", Gpus({0})}, {"b", Gpus({1})}}}}, 9);
  CHECK(NeedsPublish(reports[0]));
}

TEST_CASE("reconciler: the health annotation lists unhealthy devices sorted") {
  CHECK(EncodeGpuHealth({"GPU-b", "GPU-a"}, 7) == R"({"v":1,"unhealthy":["GPU-a","GPU-b"],"t":7})");
  CHECK(EncodeGpuHealth({}, 7) == R"({"v":1,"unhealthy":[],"t":7})");
}

}  // namespace topofit::node
