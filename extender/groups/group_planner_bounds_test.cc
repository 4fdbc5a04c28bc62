// The planner's bounds (group_planner.h, set_bounds): DomainFragmentationScore::LowerBound never exceeds
// the loss of takes inside the domain it is asked about, and a planner with bounds plans exactly what
// one filling every candidate plans - on random clusters of 2 spines x 3 blocks x 4 nodes x 8 GPUs
// with random shapes expected.
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "extender/groups/domain_fragmentation.h"
#include "extender/groups/group_planner.h"
#include "extender/groups/group_shapes.h"
#include "extender/groups/testing/small_clusters.h"

namespace topofit::groups {
namespace {

using testing::SmallNode;

struct RandomCluster {
  cluster::ClusterModel model;
  DomainMap map;
  explicit RandomCluster(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> p(0.0, 0.8);
    const double held = p(rng);
    std::vector<SmallNode> nodes;
    for (int s = 1; s <= 2; ++s) {
      for (int b = 1; b <= 3; ++b) {
        for (int j = 1; j <= 4; ++j) {
          const std::string block = "s" + std::to_string(s) + "b" + std::to_string(b);
          const std::string name = block + "-n" + std::to_string(j);
          nodes.push_back({name, {{"spine", "s" + std::to_string(s)}, {"block", block}, {"host", name}},
                           testing::RandomHeld(rng, 8, held)});
        }
      }
    }
    testing::AddNodes(model, nodes, "hgx-h100-8", 8);
    map = DomainMap::FromModel(model, testing::SmallLevels());
  }
};

GroupSpec RandomSpec(std::mt19937_64& rng, const std::string& name) {
  const int gpus[] = {1, 2, 4, 8};
  GroupSpec s;
  s.namespace_ = "ml";
  s.name = name;
  s.size = s.min_count = std::uniform_int_distribution<int>(1, 12)(rng);
  if (rng() % 3 == 0) s.min_count = std::uniform_int_distribution<int>(1, s.size)(rng);
  s.gpus = gpus[rng() % 4];
  s.level = static_cast<int>(rng() % 3);
  s.policy = rng() % 2 ? LevelPolicy::kRequired : LevelPolicy::kPreferred;
  return s;
}

TEST_CASE("domain fragmentation: the lower bound never exceeds the loss of takes inside its domain") {
  std::mt19937_64 rng(2834);
  int positive = 0;
  for (int round = 0; round < 300; ++round) {
    RandomCluster c(rng);
    const GroupNodes nodes = ReadGroupNodes(c.model, c.map);
    GroupShapeSnapshot shapes;
    for (int g = 0; g < 4; ++g) {
      const GroupSpec s = RandomSpec(rng, "g");
      shapes.shapes.push_back({s.size, s.gpus, s.level, 0.25});
    }
    DomainFragmentationScore frag;
    frag.PreScore(nodes, shapes);
    // A domain: a spine (level 0) or a block (level 1) of a random node; takes from its nodes.
    const int level = static_cast<int>(rng() % 2);
    const size_t pick = rng() % nodes.nodes.size();
    std::vector<int> slack(frag.shape_count(), 0);
    std::vector<NodeTake> takes;
    int total = 0;
    for (size_t i = 0; i < nodes.nodes.size(); ++i) {
      if (c.map.id(i, level) != c.map.id(pick, level)) continue;
      frag.AddSlack(static_cast<int>(i), slack);
      const int free = (nodes.nodes[i].free & nodes.nodes[i].usable).size();
      const int take = std::uniform_int_distribution<int>(0, free)(rng);
      if (take > 0) takes.push_back({static_cast<int>(i), take});
      total += take;
    }
    const double bound = frag.LowerBound(static_cast<int>(pick), level, slack, total);
    CHECK(bound <= frag.Score(takes) + 1e-9);
    positive += bound > 0;
  }
  CHECK(positive > 30);  // The bound is not 0 everywhere: it prunes.
}

TEST_CASE("group planner: with bounds it plans exactly what filling every candidate plans") {
  std::mt19937_64 rng(2835);
  placement::Placer placer;
  int planned = 0;
  for (int round = 0; round < 150; ++round) {
    RandomCluster c(rng);
    GroupShapeEstimate with_bounds, every_fill;
    for (int g = 0; g < 12; ++g) {
      const GroupSpec s = RandomSpec(rng, "learn-" + std::to_string(g));
      with_bounds.Observe(s);
      every_fill.Observe(s);
    }
    GroupPlanner fast(placer, &with_bounds);
    GroupPlanner slow(placer, &every_fill);
    slow.set_bounds(false);
    GroupNodes nodes = ReadGroupNodes(c.model, c.map);
    for (int g = 0; g < 4; ++g) {  // Each plan taken, so the next meets a busier cluster.
      const GroupSpec spec = RandomSpec(rng, "train-" + std::to_string(round) + "-" + std::to_string(g));
      const GroupPlan a = fast.Plan(nodes, spec);
      const GroupPlan b = slow.Plan(nodes, spec);
      REQUIRE(a.ok == b.ok);
      CHECK(a.reason == b.reason);
      CHECK(a.searched_domain == b.searched_domain);
      CHECK(a.holding_domain == b.holding_domain);
      REQUIRE(a.members.size() == b.members.size());
      for (size_t m = 0; m < a.members.size(); ++m) {
        CHECK(a.members[m].node == b.members[m].node);
        CHECK(a.members[m].gpus == b.members[m].gpus);
      }
      if (a.ok) {
        ++planned;
        Take(nodes, a);
      }
    }
  }
  CHECK(planned > 200);
}

}  // namespace
}  // namespace topofit::groups
