#include "extender/groups/domain_fragmentation.h"

#include <random>

#include <doctest/doctest.h>

#include "extender/groups/group_planner.h"
#include "extender/groups/group_shapes.h"
#include "extender/groups/testing/small_clusters.h"

namespace topofit::groups {
namespace {

using testing::SmallNode;

constexpr int kSpine = 0, kBlock = 1, kHost = 2;

GroupSpec Spec(const std::string& name, int size, int gpus, int level) {
  GroupSpec s;
  s.namespace_ = "ml";
  s.name = name;
  s.size = s.min_count = size;
  s.gpus = gpus;
  s.level = level;
  s.policy = LevelPolicy::kRequired;
  return s;
}

// Block b1 of `b1` nodes, block b2 of `b2` nodes, one spine, 8-GPU NVSwitch nodes, hostnames labelled.
struct Fixture {
  cluster::ClusterModel model;
  DomainMap map;
  placement::Placer placer;
  Fixture(int b1, int b2, const std::map<std::string, GpuSet>& held = {}) {
    std::vector<SmallNode> nodes;
    for (auto [block, n] : {std::pair{"b1", b1}, std::pair{"b2", b2}}) {
      for (int j = 1; j <= n; ++j) {
        const std::string name = std::string(block) + "-n" + std::to_string(j);
        auto h = held.find(name);
        nodes.push_back({name, {{"spine", "s1"}, {"block", block}, {"host", name}}, h == held.end() ? GpuSet() : h->second});
      }
    }
    testing::AddNodes(model, nodes, "hgx-h100-8", 8);
    map = DomainMap::FromModel(model, testing::SmallLevels());
  }
  int Node(const std::string& name) const { return static_cast<int>(*map.Find(name)); }
};

// The GPUs held on blocks b1 and b2 of five nodes each: every GPU with probability `p`.
std::map<std::string, GpuSet> RandomHeldFive(std::mt19937_64& rng, double p) {
  std::map<std::string, GpuSet> held;
  for (int j = 1; j <= 5; ++j) {
    held["b1-n" + std::to_string(j)] = testing::RandomHeld(rng, 8, p);
    held["b2-n" + std::to_string(j)] = testing::RandomHeld(rng, 8, p);
  }
  return held;
}

GroupShapeSnapshot Shapes(std::vector<GroupShape> shapes) {
  GroupShapeSnapshot s;
  s.shapes = std::move(shapes);
  return s;
}

// Four shapes at all three levels, one- and many-member, for the equivalence tests.
GroupShapeSnapshot ThreeLevelShapes() {
  return Shapes({{1, 4, kHost, 0.2}, {3, 8, kBlock, 0.2}, {2, 2, kSpine, 0.3}, {4, 1, kBlock, 0.3}});
}

TEST_CASE("domain fragmentation: the loss is the GPUs of the expected groups whose room a placement takes") {
  // b1: 4 whole free nodes (room for one 4 x 8 group); b2: 4 nodes, one with GPU 0 held (room for none).
  Fixture f(4, 4, {{"b2-n1", GpuSet::Of({0})}});
  const GroupNodes nodes = ReadGroupNodes(f.model, f.map);
  DomainFragmentationScore frag;
  CHECK(frag.Name() == "DomainFragmentation");
  frag.PreScore(nodes, Shapes({{4, 8, kBlock, 1.0}}));
  REQUIRE(frag.enabled());
  const NodeTake b1n1[] = {{f.Node("b1-n1"), 1}};
  CHECK(frag.Score(b1n1) == doctest::Approx(32));  // b1 can no longer take the 4 x 8 group: 32 GPUs lost.
  const NodeTake b2n1[] = {{f.Node("b2-n1"), 1}};
  CHECK(frag.Score(b2n1) == 0);  // b2 could not take it anyway.
  const NodeTake b2n2[] = {{f.Node("b2-n2"), 8}};
  CHECK(frag.Score(b2n2) == 0);

  // A node-level shape (1 member of 8 GPUs, hostname level) and a block shape, shares 1/2 each: a GPU off
  // a whole free node of b1 costs both; two takes on one node count as one of 2 GPUs.
  frag.PreScore(nodes, Shapes({{1, 8, kHost, 0.5}, {4, 8, kBlock, 0.5}}));
  CHECK(frag.Score(b1n1) == doctest::Approx(0.5 * 8 + 0.5 * 32));
  CHECK(frag.ScoreNode(f.Node("b1-n1"), 1) == doctest::Approx(0.5 * 8 + 0.5 * 32));
  CHECK(frag.ScoreNode(-1, 1) == 0);
  const NodeTake twice[] = {{f.Node("b2-n1"), 1}, {f.Node("b2-n1"), 1}};
  CHECK(frag.Score(twice) == 0);  // b2-n1 is broken already.
  const NodeTake out_of_range[] = {{-1, 3}, {999, 3}};
  CHECK(frag.Score(out_of_range) == 0);

  // No shape: nothing is scored; a shape at a level outside the map is dropped.
  frag.PreScore(nodes, Shapes({}));
  CHECK_FALSE(frag.enabled());
  CHECK(frag.Score(b1n1) == 0);
  frag.PreScore(nodes, Shapes({{2, 8, 7, 1.0}}));
  CHECK_FALSE(frag.enabled());
}

TEST_CASE("domain fragmentation: FGD's frag changes by the loss minus the GPUs taken, at every level") {
  std::mt19937_64 rng(28);
  for (int round = 0; round < 200; ++round) {
    Fixture f(5, 5, RandomHeldFive(rng, 0.2));
    GroupNodes nodes = ReadGroupNodes(f.model, f.map);
    const GroupShapeSnapshot shapes = Shapes({{1, 4, kHost, 0.25}, {3, 8, kBlock, 0.25}, {2, 2, kSpine, 0.5}});
    // frag = sum_g p_g sum_D (free(D) - m k fits(D)), counted directly.
    auto frag_of = [&](const GroupNodes& n) {
      double total = 0;
      for (const GroupShape& g : shapes.shapes) {
        std::map<uint32_t, std::pair<int, int>> room;  // domain -> (free, members it can take)
        for (size_t i = 0; i < n.nodes.size(); ++i) {
          const int free = (n.nodes[i].free & n.nodes[i].usable).size();
          auto& r = room[f.map.id(i, g.level)];
          r.first += free;
          r.second += free / g.gpus;
        }
        for (const auto& [_, r] : room) total += g.weight * (r.first - g.members * g.gpus * (r.second / g.members));
      }
      return total;
    };
    DomainFragmentationScore frag;
    frag.PreScore(nodes, shapes);
    std::uniform_int_distribution<int> node(0, static_cast<int>(nodes.nodes.size()) - 1);
    const int at = node(rng);
    const GpuSet free = nodes.nodes[at].free & nodes.nodes[at].usable;
    GpuSet take;
    for (int g : free.Indices()) {
      if (take.size() < 1 + round % 4) take.Add(g);  // 1-4 of its free GPUs.
    }
    const NodeTake t[] = {{at, take.size()}};
    const double before = frag_of(nodes);
    nodes.nodes[at].free = nodes.nodes[at].free - take;
    CHECK(frag_of(nodes) - before == doctest::Approx(frag.Score(t) - take.size()));
    CHECK(frag.ScoreNode(at, take.size()) == doctest::Approx(frag.Score(t)));
  }
}

TEST_CASE("domain fragmentation: SetFree node by node scores as a PreScore of the nodes as they are") {
  std::mt19937_64 rng(29);
  const GroupShapeSnapshot shapes = ThreeLevelShapes();
  for (int round = 0; round < 100; ++round) {
    Fixture f(5, 5, RandomHeldFive(rng, 0.3));
    GroupNodes nodes = ReadGroupNodes(f.model, f.map);
    DomainFragmentationScore kept;
    kept.PreScore(nodes, shapes);
    // Some nodes gain GPUs, some lose them (all of them, or none, included).
    for (size_t i = 0; i < nodes.nodes.size(); ++i) {
      if (rng() % 2) continue;
      nodes.nodes[i].free = testing::RandomHeld(rng, 8, 0.5);
      kept.SetFree(static_cast<int>(i), nodes.nodes[i].free.size());
    }
    DomainFragmentationScore fresh;
    fresh.PreScore(nodes, shapes);
    std::vector<int> slack_kept(kept.shape_count()), slack_fresh(fresh.shape_count());
    for (size_t i = 0; i < nodes.nodes.size(); ++i) {
      const int n = static_cast<int>(i);
      CHECK(kept.free(n) == fresh.free(n));
      for (int gpus = 1; gpus <= 8; ++gpus) CHECK(kept.ScoreNode(n, gpus) == doctest::Approx(fresh.ScoreNode(n, gpus)));
      kept.AddSlack(n, slack_kept);
      fresh.AddSlack(n, slack_fresh);
      for (int level = -1; level <= kHost; ++level)
        CHECK(kept.LowerBound(n, level, slack_kept, 12) == doctest::Approx(fresh.LowerBound(n, level, slack_fresh, 12)));
    }
    const NodeTake takes[] = {{0, 3}, {4, 2}, {7, 8}, {0, 1}};
    CHECK(kept.Score(takes) == doctest::Approx(fresh.Score(takes)));
  }
}

TEST_CASE("domain fragmentation: ScoreNodes scores every node as ScoreNode does, one per class and free count") {
  std::mt19937_64 rng(30);
  const GroupShapeSnapshot shapes = ThreeLevelShapes();
  for (int round = 0; round < 100; ++round) {
    Fixture f(5, 5, RandomHeldFive(rng, 0.5));
    GroupNodes nodes = ReadGroupNodes(f.model, f.map);
    DomainFragmentationScore score;
    score.PreScore(nodes, shapes);
    if (round % 4) score.ClassifyNodes();  // Every fourth round: no classes, one ScoreNode per node.
    // Some nodes change after the classes, up to all 8 GPUs free (more than any node had at PreScore).
    for (int i = 0; i < 3; ++i) score.SetFree(static_cast<int>(rng() % 10), static_cast<int>(rng() % 9));
    std::vector<int> asked = {-1, 10};  // Outside the map: 0.
    for (int n = 0; n < 10; ++n) asked.insert(asked.end(), {n, n, static_cast<int>(rng() % 10)});
    for (int gpus = 1; gpus <= 8; ++gpus) {
      std::vector<double> out(asked.size(), -1);
      score.ScoreNodes(asked, gpus, out);
      CHECK(out[0] == 0);
      CHECK(out[1] == 0);
      for (size_t i = 2; i < asked.size(); ++i) CHECK(out[i] == doctest::Approx(score.ScoreNode(asked[i], gpus)));
    }
  }
}

TEST_CASE("group planner: a one-member group keeps the block an expected 4-node group needs whole") {
  // Every node whole free: b1 has 4 (room for exactly one 4 x 8 group), b2 has 5. BestFitLess alone puts
  // a 1-GPU pod in the fuller block b1 and breaks the only room there; with the shape learned it goes to b2.
  Fixture f(4, 5);
  const GroupSpec one = Spec("one", 1, 1, kHost);
  const GroupPlan plain = GroupPlanner(f.placer).Plan(f.model, f.map, one);
  REQUIRE(plain.ok);
  CHECK(plain.members[0].node_name.rfind("b1-", 0) == 0);

  GroupShapeEstimate expected;
  REQUIRE(expected.Observe(Spec("train", 4, 8, kBlock)));
  const GroupPlan kept = GroupPlanner(f.placer, &expected).Plan(f.model, f.map, one);
  REQUIRE(kept.ok);
  CHECK(kept.members[0].node_name.rfind("b2-", 0) == 0);
  CHECK(expected.Snapshot()->observed == 2);  // The planned group is learned too.
}

TEST_CASE("group planner: a group goes where it breaks the fewest expected groups, at the level above") {
  // Two spines' worth in one: b1 (4 whole nodes) and b2 (6 whole nodes); a 2 x 8 group at block level.
  // BestFitLess: the least room, b1 - leaving 2 nodes there and 6 in b2. Expecting 4 x 8 groups, b1 has
  // room for one and b2 for one: taking 2 of b2's 6 keeps both rooms, taking 2 of b1's 4 loses one.
  Fixture f(4, 6);
  const GroupSpec two = Spec("two", 2, 8, kBlock);
  CHECK(GroupPlanner(f.placer).Plan(f.model, f.map, two).searched_domain == "s1/b1");
  GroupShapeEstimate expected;
  for (int i = 0; i < 3; ++i) expected.Observe(Spec("train-" + std::to_string(i), 4, 8, kBlock));
  const GroupPlan plan = GroupPlanner(f.placer, &expected).Plan(f.model, f.map, two);
  REQUIRE(plan.ok);
  CHECK(plan.searched_domain == "s1/b2");
  CHECK(plan.members.size() == 2);
}

TEST_CASE("group shape estimate: shares sum to 1 in descending weight, each group key once, decay") {
  GroupShapeEstimate e(GroupShapeOptions{.half_life = 1, .max_shapes = 2, .dedup = 2});
  CHECK(e.Snapshot()->shapes.empty());
  CHECK(e.Observe(Spec("a", 4, 8, kBlock)));
  CHECK_FALSE(e.Observe(Spec("a", 4, 8, kBlock)));  // The same group planned again.
  CHECK_FALSE(e.Observe(Spec("none", 4, 0, kBlock)));
  CHECK_FALSE(e.Observe(Spec("bad-level", 4, 8, -1)));
  CHECK(e.Observe(Spec("b", 1, 1, kHost)));  // Weighs 2: half-life 1 group.
  auto s = e.Snapshot();
  REQUIRE(s->shapes.size() == 2);
  CHECK(s->shapes[0].members == 1);
  CHECK(s->shapes[0].gpus == 1);
  CHECK(s->shapes[0].level == kHost);
  CHECK(s->shapes[0].weight == doctest::Approx(2.0 / 3));
  CHECK(s->shapes[1].weight == doctest::Approx(1.0 / 3));
  CHECK(s->observed == 2);
  // A third shape replaces the lightest; "a" left the dedup window (2 keys) and counts again.
  CHECK(e.Observe(Spec("c", 2, 2, kSpine)));
  CHECK(e.Observe(Spec("a", 4, 8, kBlock)));
  s = e.Snapshot();
  REQUIRE(s->shapes.size() == 2);
  double sum = 0;
  for (const GroupShape& g : s->shapes) sum += g.weight;
  CHECK(sum == doctest::Approx(1));
  CHECK(s->shapes[0].weight >= s->shapes[1].weight);
}

}  // namespace
}  // namespace topofit::groups
