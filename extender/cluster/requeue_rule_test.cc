// The requeue rule on a model, without watches: who waits, what frees GPUs, who is tried again.
#include "extender/cluster/requeue_rule.h"

#include <doctest/doctest.h>

#include "extender/cluster/dra_cluster.h"
#include "extender/cluster/testing/builders.h"
#include "extender/cluster/testing/dra_builders.h"

namespace topofit::cluster {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Request;

std::vector<std::string> Names(const std::vector<Requeue>& rs) {
  std::vector<std::string> out;
  for (const Requeue& r : rs) out.push_back(r.pod.name + "@" + r.node);
  return out;
}

struct Cluster {
  ClusterModel model;
  RequeueRule rule{model};
  Cluster() {
    model.ApplyNode(MakeNode("n", 8, "dgx1-v100"));
    model.ApplyNode(MakeNode("m", 8, "dgx1-v100"));
    model.ApplyPod(MakePod("a", 4, "n", "0,1,2,3"));
    model.ApplyPod(MakePod("c", 4, "n", "4,5,6,7"));
    model.ApplyPod(MakePod("b", 8, "m", "0,1,2,3,4,5,6,7"));
  }
};

TEST_CASE("requeue rule: a pod that waits on a node is tried again once when a holder there goes") {
  Cluster c;
  c.rule.TurnedAway(Request("w", 4), {"n"});
  c.rule.TurnedAway(Request("big", 8), {"n"});
  CHECK(c.model.waits().size() == 2);
  CHECK(Names(c.rule.DeletePod("a")) == std::vector<std::string>{"pod-w@n"});  // 4 free: "big" still waits.
  CHECK(c.model.waits().size() == 1);
  CHECK(Names(c.rule.DeletePod("c")) == std::vector<std::string>{"pod-big@n"});
  CHECK(c.model.waits().size() == 0);
}

TEST_CASE("requeue rule: only the pods that now fit, and only on the node that freed") {
  Cluster c;
  c.rule.TurnedAway(Request("w", 4), {"n"});
  c.rule.TurnedAway(Request("x", 2), {"m"});
  auto finished = MakePod("a", 4, "n", "0,1,2,3");
  finished.phase = "Succeeded";
  CHECK(Names(c.rule.ApplyPod(finished)) == std::vector<std::string>{"pod-w@n"});
  CHECK(c.model.waits().size() == 1);  // x still waits on m.
  CHECK(c.rule.ApplyPod(finished).empty());  // Once: a second delivery frees nothing new.
}

TEST_CASE("requeue rule: not errors - nothing waits, a pod update that frees nothing, a pod passed nowhere") {
  Cluster c;
  CHECK(c.rule.DeletePod("a").empty());  // Nobody waits: nothing looked up, nothing returned.
  c.rule.TurnedAway(Request("w", 4), {"n"});
  CHECK(c.rule.ApplyPod(MakePod("b", 8, "m", "0,1,2,3,4,5,6,7")).empty());  // Still running on m.
  CHECK(c.rule.DeletePod("no-such-uid").empty());
  c.rule.TurnedAway(Request("none", 0), {"n"});  // Asks no GPUs: never waits.
  c.rule.TurnedAway(Request("nowhere", 2), {});  // Failed on no node for capacity: nothing noted.
  CHECK(c.model.waits().size() == 1);
}

}  // namespace

TEST_CASE("requeue rule: a DRA claim's allocation that goes frees its GPUs and requeues who waits there") {
  ClusterModel model;
  DraCluster dra(model);
  RequeueRule rule(model);
  dra.ApplyDeviceClass(testing::GpuClass());
  dra.ApplyNode(testing::DecodedNode("d1", 0));
  dra.ApplyResourceSlice(testing::GpuSlice("d1", {0, 1, 2, 3}));
  // A user's claim holds all four GPUs; a 2-GPU pod is turned away there.
  CHECK(dra.ApplyResourceClaim(testing::GpuClaim("c1", "", "d1", {0, 1, 2, 3}, false)).empty());
  CHECK(model.Node("d1")->free.empty());
  rule.TurnedAway(Request("w", 2), {"d1"});
  // The claim moves to other GPUs of the node (still four): nothing freed.
  CHECK(dra.ApplyResourceClaim(testing::GpuClaim("c1", "", "d1", {3, 2, 1, 0}, false)).empty());
  // Deallocated (the resourceclaim controller clears status.allocation when its pods are done).
  auto cleared = k8s::DecodeResourceClaim(R"({"metadata":{"name":"p-extended-resources-1","namespace":"ml","uid":"c1"}})");
  REQUIRE(cleared.ok());
  std::vector<std::string> freed = dra.ApplyResourceClaim(*cleared);
  CHECK(freed == std::vector<std::string>{"d1"});
  CHECK(model.Node("d1")->free.size() == 4);
  CHECK(Names(rule.Freed("d1")) == std::vector<std::string>{"pod-w@d1"});
  CHECK(model.waits().size() == 0);
  // Deleting a claim that holds nothing frees nothing.
  CHECK(dra.DeleteResourceClaim("c1").empty());
  dra.ApplyResourceClaim(testing::GpuClaim("c2", "", "d1", {0, 1}, false));
  CHECK(dra.DeleteResourceClaim("c2") == std::vector<std::string>{"d1"});
}

}  // namespace topofit::cluster
