// DomainLoss through the Pipeline: a pod of no group ordered by the domain loss in its best band.
#include "extender/groups/domain_loss.h"

#include <random>

#include <doctest/doctest.h>

#include "extender/groups/testing/small_clusters.h"
#include "extender/placement/pipeline.h"

namespace topofit::groups {
namespace {

using testing::AddNodes;
using testing::Blocks;
using testing::SmallLevels;

// A cluster of 8-GPU nodes in blocks, the pipeline with the domain loss, and the groups expected.
struct Rig {
  cluster::ClusterModel model;
  placement::Pipeline pipeline;
  GroupLookup lookup{SmallLevels()};
  GroupShapeEstimate expected;
  DomainMapCache maps{model, SmallLevels()};
  DomainLoss loss{maps, lookup, expected};
  explicit Rig(const std::vector<testing::SmallNode>& nodes, placement::PipelineConfig config = {})
      : pipeline(&model, config) {
    AddNodes(model, nodes, "hgx-h100-8", 8);
    pipeline.SetBandLoss(&loss);
  }
  // A group of `members` x 8 GPUs asked in one block has been planned.
  void ExpectBlockGroups(int members) {
    GroupSpec spec;
    spec.name = "seen-" + std::to_string(members);
    spec.size = spec.min_count = members;
    spec.gpus = 8;
    spec.level = 1;  // block
    REQUIRE(expected.Observe(spec));
  }
  // The nodes scored 10 for `pod`.
  std::vector<std::string> Best(const cluster::PodRequest& pod) {
    const std::vector<std::string> names = model.NodeNames();
    std::vector<std::string> out;
    for (const placement::NodeScore& s : pipeline.Prioritize(pod, std::span<const std::string>(names)))
      if (s.score == 10) out.push_back(names[s.index]);
    return out;
  }
};

// Two blocks of four nodes; b1-n1 is full, so block b1 has three whole nodes and b2 four.
std::vector<testing::SmallNode> OneFullNode() {
  auto nodes = Blocks(2, 4);
  nodes[0].held = GpuSet::FirstN(8);
  return nodes;
}

TEST_CASE("a pod of no group opens a node in a broken block, not the only block an expected group fits") {
  Rig rig(OneFullNode());
  const cluster::PodRequest pod = cluster::testing::Request("single", 1);
  // No group seen: every whole node ties (7 GPUs left after either way), both blocks.
  CHECK(rig.Best(pod) == std::vector<std::string>{"b1-n2", "b1-n3", "b1-n4", "b2-n1", "b2-n2", "b2-n3", "b2-n4"});
  rig.ExpectBlockGroups(4);
  // A 4-node group fits only b2: the pod costs it nothing in b1, the whole group (32 GPUs) in b2.
  CHECK(rig.Best(pod) == std::vector<std::string>{"b1-n2", "b1-n3", "b1-n4"});
  const std::vector<std::string> names = rig.model.NodeNames();
  std::vector<std::string_view> views(names.begin(), names.end());
  for (const placement::NodeEvaluation& e : rig.pipeline.Evaluate(pod, views)) {
    CAPTURE(e.name);
    if (e.name == "b1-n1") {
      CHECK_FALSE(e.band_loss.has_value());  // Fails: no free GPU, not in the band.
    } else {
      REQUIRE(e.band_loss.has_value());
      CHECK(*e.band_loss == doctest::Approx(e.name.starts_with("b1") ? 0.0 : 32.0));
      CHECK(e.score == (e.name.starts_with("b1") ? 10 : 5));
    }
  }
  // A GPU taken on b2 breaks that block too (3 whole nodes and one of 7 left): no block fits the group,
  // every loss is 0, and fit-then-pack alone chooses the broken node. The losses are read again.
  rig.model.ApplyPod(cluster::testing::MakePod("other", 1, "b2-n1", "0"));
  CHECK(rig.Best(pod) == std::vector<std::string>{"b2-n1"});
}

TEST_CASE("with filter-keeps-best only the nodes of least domain loss pass the filter") {
  placement::PipelineConfig config;
  config.filter_keeps_best = true;
  Rig rig(OneFullNode(), config);
  rig.ExpectBlockGroups(4);
  const std::vector<std::string> names = rig.model.NodeNames();
  const placement::FilterOutcome f = rig.pipeline.Filter(cluster::testing::Request("single", 1), names);
  std::vector<std::string> passed;
  for (uint32_t i : f.passed) passed.push_back(names[i]);
  CHECK(passed == std::vector<std::string>{"b1-n2", "b1-n3", "b1-n4"});
}

TEST_CASE("the domain loss is never asked for a group member, nor without a group shape, nor a pod of no GPU") {
  Rig rig(OneFullNode());
  CHECK_FALSE(rig.loss.Enabled(cluster::testing::Request("single", 1)));  // No shape yet.
  rig.ExpectBlockGroups(4);
  CHECK(rig.loss.Enabled(cluster::testing::Request("single", 1)));
  CHECK_FALSE(rig.loss.Enabled(cluster::testing::Request("cpu-only", 0)));
  CHECK_FALSE(rig.loss.Enabled(cluster::testing::Request("member", 8, {{"topofit.io/group", "train"}})));
}

TEST_CASE("with no group shape learnt, single pods score exactly as without the domain loss") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    auto nodes = Blocks(3, 5);
    for (auto& n : nodes) n.held = testing::RandomHeld(rng, 8, 0.4);
    Rig with(nodes);
    cluster::ClusterModel plain_model;
    AddNodes(plain_model, nodes, "hgx-h100-8", 8);
    placement::Pipeline plain(&plain_model);
    const std::vector<std::string> names = with.model.NodeNames();
    for (int gpus : {1, 2, 4, 8}) {
      const cluster::PodRequest pod = cluster::testing::Request("p" + std::to_string(gpus), gpus);
      const auto a = with.pipeline.Prioritize(pod, std::span<const std::string>(names));
      const auto b = plain.Prioritize(pod, std::span<const std::string>(names));
      REQUIRE(a.size() == b.size());
      for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].score == b[i].score);
    }
  }
}

TEST_CASE("after binds and deletions the losses brought up to date equal those read afresh") {
  // Brought up to date by the nodes the model logged as changed, or by every node after a burst of
  // more changes than it keeps.
  std::mt19937_64 rng(31);
  Rig r(Blocks(3, 4));
  r.ExpectBlockGroups(3);
  GroupSpec pairs;
  pairs.name = "pairs";
  pairs.size = pairs.min_count = 2;
  pairs.gpus = 2;
  pairs.level = 1;
  REQUIRE(r.expected.Observe(pairs));
  const std::vector<std::string> names = r.model.NodeNames();
  auto losses = [&](const DomainLoss& loss, int gpus) {
    REQUIRE(loss.Enabled(cluster::testing::Request("p", gpus)));  // Builds the domain map, as the pipeline does.
    auto reader = r.model.Read();
    std::vector<const cluster::NodeState*> states;
    for (const std::string& n : names) states.push_back(reader.Find(n));
    std::vector<double> out(states.size());
    loss.Losses(reader, cluster::testing::Request("p", gpus), states, out);
    return out;
  };
  losses(r.loss, 1);  // Prepared once; kept, then brought up to date below.
  bool some_loss = false;
  std::uniform_int_distribution<size_t> node(0, names.size() - 1);
  for (int round = 0; round < 40; ++round) {
    const std::string uid = "hold-" + std::to_string(round % 6);
    if (round % 3 == 2) {
      r.model.DeletePod(uid);
    } else {
      const GpuSet held = testing::RandomHeld(rng, 8, 0.4);
      r.model.DeletePod(uid);
      if (!held.empty()) r.model.ApplyPod(cluster::testing::MakePod(uid, held.size(), names[node(rng)], held.ToString()));
    }
    if (round % 10 == 9) {  // More changes than the model keeps (FreeChangeLog::kKept): every node read again.
      for (uint64_t i = 0; i < cluster::FreeChangeLog::kKept; ++i) {
        r.model.ApplyPod(cluster::testing::MakePod("burst", 1, names[node(rng)], "7"));
        r.model.DeletePod("burst");
      }
      r.model.ApplyPod(cluster::testing::MakePod("burst-left", 1, names[node(rng)], "6"));
    }
    DomainLoss fresh(r.maps, r.lookup, r.expected);
    for (int gpus : {1, 2, 4, 8}) {
      INFO("round ", round, ", ", gpus, " GPUs");
      const std::vector<double> kept = losses(r.loss, gpus), read = losses(fresh, gpus);
      for (size_t i = 0; i < names.size(); ++i) CHECK(kept[i] == doctest::Approx(read[i]));
      for (double l : kept) some_loss |= l > 0;
    }
  }
  CHECK(some_loss);
}

TEST_CASE("a node deleted, one added in its slot, and one re-resolved: the losses kept equal those read afresh") {
  Rig r(Blocks(3, 4));
  r.ExpectBlockGroups(3);
  auto losses = [&](const DomainLoss& loss) {
    REQUIRE(loss.Enabled(cluster::testing::Request("p", 1)));
    const std::vector<std::string> names = r.model.NodeNames();
    auto reader = r.model.Read();
    std::vector<const cluster::NodeState*> states;
    for (const std::string& n : names) states.push_back(reader.Find(n));
    std::vector<double> out(states.size());
    loss.Losses(reader, cluster::testing::Request("p", 1), states, out);
    return out;
  };
  auto check = [&](const char* what) {
    INFO(what);
    DomainLoss fresh(r.maps, r.lookup, r.expected);
    const std::vector<double> kept = losses(r.loss), read = losses(fresh);
    REQUIRE(kept.size() == read.size());
    for (size_t i = 0; i < kept.size(); ++i) CHECK(kept[i] == doctest::Approx(read[i]));
  };
  losses(r.loss);  // Prepared once.
  const uint32_t slot = r.model.Read().Find("b1-n1")->slot();
  r.model.DeleteNode("b1-n1");
  r.model.ApplyNode(cluster::testing::MakeNode("b3-n9", 8, "hgx-h100-8",
                                               {{"spine", "s1"}, {"block", "b3"}, {"host", "b3-n9"}}));
  REQUIRE(r.model.Read().Find("b3-n9")->slot() == slot);  // The deleted node's slot, in another block.
  r.model.ApplyPod(cluster::testing::MakePod("on-new", 8, "b3-n9", "0,1,2,3,4,5,6,7"));
  check("a node added in a deleted node's slot, then its GPUs taken");
  r.model.ApplyNode(cluster::testing::MakeNode("b2-n1", 4, "hgx-h100-4",  // A new topology: a new NodeState.
                                               {{"spine", "s1"}, {"block", "b2"}, {"host", "b2-n1"}}));
  r.model.ApplyPod(cluster::testing::MakePod("on-b2", 2, "b2-n2", "0,1"));
  check("a node re-resolved, then another's GPUs taken");
}

TEST_CASE("the domain map is rebuilt when a node's labels change, and only then") {
  cluster::ClusterModel model;
  AddNodes(model, Blocks(1, 2), "hgx-h100-8", 8);
  DomainMapCache maps(model, SmallLevels());
  const auto first = maps.Get();
  CHECK(maps.Get() == first);  // Nothing changed: the same map.
  model.ApplyPod(cluster::testing::MakePod("busy", 2, "b1-n1", "0,1"));
  CHECK(maps.Get() == first);  // A pod is no node change.
  model.ApplyNode(cluster::testing::MakeNode("b1-n2", 8, "hgx-h100-8", {{"spine", "s1"}, {"block", "b9"}, {"host", "b1-n2"}}));
  const auto second = maps.Get();
  CHECK(second != first);
  CHECK(second->domain_name(1, second->id(*second->Find("b1-n2"), 1)) == "s1/b9");
  CHECK(maps.Peek() == second);
}

}  // namespace
}  // namespace topofit::groups
