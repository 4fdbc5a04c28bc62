// The requeue rule on a model, without watches: who waits, what frees GPUs, who is tried again.
#include "extender/cluster/requeue_rule.h"

#include <doctest/doctest.h>

#include "extender/cluster/testing/builders.h"

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
}  // namespace topofit::cluster
