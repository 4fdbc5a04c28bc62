#include "extender/groups/group_planner.h"

#include <functional>

#include <doctest/doctest.h>

#include "extender/groups/domain_tree.h"
#include "extender/groups/testing/small_clusters.h"
#include "topology/profiles.h"

namespace topofit::groups {
namespace {

using testing::SmallNode;

GroupSpec Spec(int size, int gpus, int level, LevelPolicy policy, int min_count = 0) {
  GroupSpec s;
  s.namespace_ = "ml";
  s.name = "job";
  s.size = size;
  s.min_count = min_count ? min_count : size;
  s.gpus = gpus;
  s.level = level;
  s.policy = policy;
  return s;
}

constexpr int kSpine = 0, kBlock = 1, kHost = 2;
const GpuSet kAll8 = GpuSet::FirstN(8);

struct Fixture {
  cluster::ClusterModel model;
  DomainMap map;
  placement::Placer placer;
  Fixture(const std::vector<SmallNode>& nodes, const std::string& profile = "hgx-h100-8") {
    testing::AddNodes(model, nodes, profile, 8);
    map = DomainMap::FromModel(model, testing::SmallLevels());
  }
  GroupPlan Plan(const GroupSpec& spec) { return GroupPlanner(placer).Plan(model, map, spec); }
};

// Blocks b1 (5 nodes) and b2 (3 nodes); `busy` nodes of b1 have GPUs held.
std::vector<SmallNode> TwoBlocks(int b1_nodes, int b2_nodes) {
  std::vector<SmallNode> out;
  for (int j = 1; j <= b1_nodes; ++j) out.push_back({"b1-n" + std::to_string(j), {{"spine", "s1"}, {"block", "b1"}}, {}});
  for (int j = 1; j <= b2_nodes; ++j) out.push_back({"b2-n" + std::to_string(j), {{"spine", "s1"}, {"block", "b2"}}, {}});
  return out;
}

TEST_CASE("group planner: 8 pods x 8 GPUs need a block with 8 free nodes - the reason names the best") {
  auto nodes = TwoBlocks(8, 8);
  for (int j = 0; j < 3; ++j) nodes[j].held = GpuSet::Of({0});      // b1: 5 whole nodes left
  for (int j = 8; j < 10; ++j) nodes[j].held = GpuSet::Of({3, 4});  // b2: 6 whole nodes left
  Fixture f(nodes);
  GroupPlan no = f.Plan(Spec(8, 8, kBlock, LevelPolicy::kRequired));
  CHECK_FALSE(no.ok);
  CHECK(no.reason == "no block can take 8 members of 8 GPUs: the best, s1/b2, has room for 6");
  CHECK(no.members.empty());

  GroupPlan six = f.Plan(Spec(8, 8, kBlock, LevelPolicy::kRequired, 6));  // min-count 6 fits b2 only
  REQUIRE(six.ok);
  CHECK(six.members.size() == 6);
  CHECK(six.searched_domain == "s1/b2");
  for (const MemberPlan& m : six.members) CHECK(m.gpus == kAll8);
  CHECK(six.notes.back() == "placed 6 of 8 members (the min-count): no block can take all 8");

  GroupPlan five = f.Plan(Spec(5, 8, kBlock, LevelPolicy::kRequired));  // both fit: best fit is b1 (room 5)
  REQUIRE(five.ok);
  CHECK(five.searched_domain == "s1/b1");
  CHECK(five.holding_domain == "s1/b1");
  CHECK(five.holding_level == kBlock);
}

TEST_CASE("group planner: preferred falls back to the broader level, then the whole cluster, and says so") {
  std::vector<SmallNode> nodes = TwoBlocks(2, 2);
  nodes.push_back({"c-n1", {{"spine", "s2"}, {"block", "b3"}}, {}});
  Fixture f(nodes);
  GroupPlan spine = f.Plan(Spec(4, 8, kBlock, LevelPolicy::kPreferred));
  REQUIRE(spine.ok);
  CHECK(spine.searched_level == kSpine);
  CHECK(spine.searched_domain == "s1");
  CHECK(spine.holding_domain == "s1");
  CHECK(spine.notes.back() == "preferred block: none can take 4 members; placed within spine s1");

  GroupPlan all = f.Plan(Spec(5, 8, kBlock, LevelPolicy::kPreferred));
  REQUIRE(all.ok);
  CHECK(all.searched_level == -1);
  CHECK(all.holding_level == -1);
  CHECK(all.notes.back() == "preferred block: none can take 5 members; placed within the whole cluster");

  GroupPlan none = f.Plan(Spec(6, 8, kBlock, LevelPolicy::kPreferred));
  CHECK_FALSE(none.ok);
  CHECK(none.reason == "the cluster has room for 5 of 6 members of 8 GPUs");
}

TEST_CASE("group planner: a group that fits one node stays on it, on the best sets, members sharing it") {
  auto nodes = TwoBlocks(2, 1);
  nodes[0].held = GpuSet::Of({0, 1, 2, 3});  // b1-n1: 4 free
  Fixture f(nodes);
  GroupPlan p = f.Plan(Spec(2, 2, kBlock, LevelPolicy::kRequired));
  REQUIRE(p.ok);
  REQUIRE(p.members.size() == 2);
  // Block b1 is partly used, b2 whole free: b1; inside it the partly used node, which holds both.
  CHECK(p.searched_domain == "s1/b1");
  CHECK(p.holding_level == 3);  // one node
  CHECK(p.holding_domain == "b1-n1");
  CHECK(p.members[0].node_name == "b1-n1");
  CHECK(p.members[1].node_name == "b1-n1");
  CHECK((p.members[0].gpus | p.members[1].gpus) == GpuSet::Of({4, 5, 6, 7}));
  CHECK(p.gpus() == 4);
  CHECK(p.min_ring_mbps > 0);
}

TEST_CASE("group planner: split over nodes, the partly used ones are used up first and whole ones kept") {
  // One block, nodes with room for 3, 1 and 2 members of 2 GPUs and one whole free node (room 4): 6
  // members use up the three partly used nodes and leave the whole one whole.
  std::vector<SmallNode> nodes = TwoBlocks(4, 0);
  nodes[0].held = GpuSet::Of({0, 1});              // room 3
  nodes[1].held = GpuSet::Of({0, 1, 2, 3, 4, 5});  // room 1
  nodes[2].held = GpuSet::Of({0, 1, 2, 3});        // room 2
  Fixture f(nodes);
  GroupPlan p = f.Plan(Spec(6, 2, kBlock, LevelPolicy::kRequired));
  REQUIRE(p.ok);
  std::map<std::string, int> per_node;
  for (const MemberPlan& m : p.members) per_node[m.node_name]++;
  CHECK(per_node == std::map<std::string, int>{{"b1-n1", 3}, {"b1-n2", 1}, {"b1-n3", 2}});
  // 8 members: all the partly used room (6), then 2 on the whole node.
  GroupPlan eight = f.Plan(Spec(8, 2, kBlock, LevelPolicy::kRequired));
  REQUIRE(eight.ok);
  per_node.clear();
  for (const MemberPlan& m : eight.members) per_node[m.node_name]++;
  CHECK(per_node == std::map<std::string, int>{{"b1-n1", 3}, {"b1-n2", 1}, {"b1-n3", 2}, {"b1-n4", 2}});
}

TEST_CASE("group planner: among equal nodes a small group goes to the fullest block") {
  auto nodes = TwoBlocks(2, 2);
  nodes[1].held = kAll8;  // b1: one node busy, one whole free; b2: two whole free
  Fixture f(nodes);
  GroupPlan p = f.Plan(Spec(1, 8, kHost, LevelPolicy::kRequired));
  REQUIRE(p.ok);
  CHECK(p.members[0].node_name == "b1-n1");  // keeps block b2 whole
}

TEST_CASE("group planner: nodes without the level's labels are domains of their own, and explain says so") {
  auto nodes = TwoBlocks(2, 0);
  nodes.push_back({"lone", {{"spine", "s1"}}, {}});
  Fixture f(nodes);
  GroupPlan p = f.Plan(Spec(3, 8, kBlock, LevelPolicy::kRequired));
  CHECK_FALSE(p.ok);
  CHECK(p.reason == "no block can take 3 members of 8 GPUs: the best, s1/b1, has room for 2");
  REQUIRE(p.notes.size() == 1);
  CHECK(p.notes[0] == "1 node carries no block label: each is a block of its own");
}

TEST_CASE("group planner: a required min-link is each member's set rule, named in the reason") {
  std::vector<SmallNode> nodes = TwoBlocks(1, 0);
  Fixture f(nodes, "pcie-8-dual-socket");  // no NVLink at all
  GroupSpec s = Spec(1, 2, kBlock, LevelPolicy::kRequired);
  s.intent.policy = cluster::TopologyPolicy::kRequired;
  GroupPlan p = f.Plan(s);
  CHECK_FALSE(p.ok);
  CHECK(p.reason == "no block can take 1 member of 2 GPUs with every pair at least NV: the best, s1/b1, has room for 0");
}

TEST_CASE("group planner: invalid specs are reasons, not plans") {
  Fixture f(TwoBlocks(1, 0));
  CHECK(f.Plan(Spec(1, 0, kBlock, LevelPolicy::kRequired)).reason == "group ml/job asks for no GPUs");
  CHECK(f.Plan(Spec(2, 8, kBlock, LevelPolicy::kRequired, 3)).reason ==
        "group ml/job: size 2 and min-count 3 are not 1 <= min-count <= size");
  CHECK(f.Plan(Spec(1, 8, 7, LevelPolicy::kRequired)).reason == "group ml/job: level 7 is not one of the 3 levels");
}

TEST_CASE("group planner: planning writes nothing - a plan bound as pods is what the model then holds") {
  Fixture f(TwoBlocks(2, 2));
  const cluster::ClusterTotals before = f.model.Totals();
  GroupPlan p = f.Plan(Spec(3, 4, kBlock, LevelPolicy::kRequired));
  REQUIRE(p.ok);
  CHECK(f.model.Totals().free_gpus == before.free_gpus);
  GroupNodes copy = ReadGroupNodes(f.model, f.map);
  Take(copy, p);
  int i = 0;
  for (const MemberPlan& m : p.members) {
    f.model.ApplyPod(cluster::testing::MakePod("m" + std::to_string(i++), 4, m.node_name, m.gpus.ToString()));
  }
  GroupNodes after = ReadGroupNodes(f.model, f.map);
  for (size_t n = 0; n < after.nodes.size(); ++n) CHECK(after.nodes[n].free == copy.nodes[n].free);
  CHECK(f.model.Totals().free_gpus == before.free_gpus - 12);
  GroupPlan next = GroupPlanner(f.placer).Plan(after, Spec(3, 4, kBlock, LevelPolicy::kRequired));
  REQUIRE(next.ok);
  for (const MemberPlan& m : next.members) CHECK(m.gpus.IsSubsetOf(after.nodes[m.node].free));
}

// Most disjoint k-sets of `free` whose every pair is NVLink, by exhaustive search.
int MaxNvPacking(const Topology& t, GpuSet free, int k) {
  std::function<int(GpuSet)> best = [&](GpuSet left) {
    int lo = left.Lowest();
    if (lo < 0 || left.size() < k) return 0;
    int most = best(left - GpuSet::Of({lo}));  // GPU lo unused
    std::vector<int> rest = (left - GpuSet::Of({lo})).Indices();
    std::function<void(size_t, GpuSet)> pick = [&](size_t from, GpuSet set) {
      if (set.size() == k) {
        if (t.selector().MeetsMinLink(set, LinkClass::Nv)) most = std::max(most, 1 + best(left - set));
        return;
      }
      for (size_t i = from; i < rest.size(); ++i) {
        GpuSet s = set;
        s.Add(rest[i]);
        pick(i + 1, s);
      }
    };
    pick(0, GpuSet::Of({lo}));
    return most;
  };
  return best(free);
}

TEST_CASE("group planner: member after member, the Placer's NVLink sets can pack fewer than possible (DGX-1)") {
  // The capacity the planner counts is the Placer's rule applied member after member (placer.h), not
  // an exhaustive packing. On the DGX-1's hybrid cube-mesh, where NVLink does not join every pair,
  // that is never more than the most disjoint all-NVLink sets, and for 2-GPU members on 22 of the 256
  // free sets it is one fewer: on free 0,2,4,5 the best-ring first pair leaves two GPUs with no NVLink
  // between them, where 0+2 and 4+5 would both do. A known limit (docs/groups.md).
  auto matrix = ProfileMatrix("dgx1-v100");
  REQUIRE(matrix.ok());
  auto topo = Topology::Build(*matrix);
  REQUIRE(topo.ok());
  placement::Placer placer;
  cluster::PodIntent nv{cluster::TopologyPolicy::kRequired, LinkClass::Nv};
  std::map<int, int> fewer;  // k -> free sets packed short
  for (int k = 2; k <= 4; ++k) {
    for (uint64_t mask = 0; mask < 256; ++mask) {
      GpuSet free(mask), left = free;
      int seq = 0;
      for (auto c = placer.Choose(**topo, left, k, nv); c.found; c = placer.Choose(**topo, left, k, nv)) {
        left = left - c.gpus;
        ++seq;
      }
      const int exact = MaxNvPacking(**topo, free, k);
      CHECK(seq <= exact);
      CHECK(seq >= exact - 1);
      if (seq != exact) fewer[k]++;
    }
  }
  CHECK(fewer == std::map<int, int>{{2, 22}});
  GpuSet example = GpuSet::Of({0, 2, 4, 5});
  auto first = placer.Choose(**topo, example, 2, nv);
  REQUIRE(first.found);
  CHECK_FALSE(placer.Choose(**topo, example - first.gpus, 2, nv).found);
  CHECK(MaxNvPacking(**topo, example, 2) == 2);
}

}  // namespace
}  // namespace topofit::groups
