#include "bench/groups_policies.h"

#include <map>
#include <random>
#include <set>

#include <doctest/doctest.h>

#include "bench/groups_replay.h"
#include "extender/groups/testing/small_clusters.h"

namespace topofit::bench {
namespace {

using groups::GroupSpec;
using groups::LevelPolicy;
using groups::MemberPlan;
using groups::testing::SmallNode;

constexpr int kBlock = 1, kHost = 2;

GroupSpec Spec(int size, int gpus, int level, LevelPolicy policy) {
  GroupSpec s;
  s.namespace_ = "bench";
  s.name = "g";
  s.size = s.min_count = size;
  s.gpus = gpus;
  s.level = level;
  s.policy = policy;
  return s;
}

struct World {
  cluster::ClusterModel model;
  groups::DomainMap map;
  groups::GroupNodes nodes;
  placement::Placer placer;
  std::vector<std::unique_ptr<GroupPolicy>> policies;
  explicit World(const std::vector<SmallNode>& n) {
    groups::testing::AddNodes(model, n, "hgx-h100-8", 8);
    map = groups::DomainMap::FromModel(model, groups::testing::SmallLevels());
    nodes = groups::ReadGroupNodes(model, map);
    policies = AllGroupPolicies(placer);
  }
  GroupPolicy& policy(const std::string& name) {
    for (auto& p : policies) {
      if (p->name() == name) return *p;
    }
    FAIL("no policy " << name);
    return *policies.front();
  }
};

std::map<std::string, int> PerNode(const std::vector<MemberPlan>& members) {
  std::map<std::string, int> out;
  for (const MemberPlan& m : members) out[m.node_name]++;
  return out;
}

TEST_CASE("group policies: the four, in order") {
  placement::Placer placer;
  auto all = AllGroupPolicies(placer);
  REQUIRE(all.size() == 4);
  CHECK(all[0]->name() == "topofit");
  CHECK(all[1]->name() == "no-gang");
  CHECK(all[2]->name() == "kueue-bestfit");
  CHECK(all[3]->name() == "volcano-tier");
}

TEST_CASE("group policies: every member inside free GPUs and never twice - gangs give all or none") {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    auto nodes = groups::testing::Blocks(2, 3);
    for (SmallNode& n : nodes) n.held = groups::testing::RandomHeld(rng, 8, 0.5);
    World w(nodes);
    const int ks[] = {1, 2, 4, 8};
    GroupSpec spec = Spec(1 + rng() % 4, ks[rng() % 4], 1 + rng() % 2,
                          rng() % 2 ? LevelPolicy::kRequired : LevelPolicy::kPreferred);
    for (auto& p : w.policies) {
      CAPTURE(iter);
      CAPTURE(p->name());
      auto members = p->Place(w.nodes, spec);
      std::map<int, GpuSet> given;
      for (const MemberPlan& m : members) {
        CHECK(m.gpus.size() == spec.gpus);
        CHECK(m.gpus.IsSubsetOf(w.nodes.nodes[m.node].free));
        CHECK_FALSE(m.gpus.Intersects(given[m.node]));
        given[m.node] = given[m.node] | m.gpus;
      }
      if (p->name() != "no-gang") CHECK((members.empty() || static_cast<int>(members.size()) == spec.size));
      // A gang that finds room agrees with topofit on whether there is room at the level.
      if (p->name() != "no-gang") CHECK(members.empty() == w.policy("topofit").Place(w.nodes, spec).empty());
    }
  }
}

TEST_CASE("group policies: no-gang puts each member on the node with the most free GPUs, and stops partway") {
  auto nodes = groups::testing::Blocks(1, 2);
  nodes[1].held = GpuSet::Of({0, 1, 2, 3});  // b1-n1: 8 free, b1-n2: 4 free
  World w(nodes);
  auto three = w.policy("no-gang").Place(w.nodes, Spec(3, 4, kBlock, LevelPolicy::kRequired));
  REQUIRE(three.size() == 3);
  CHECK(three[0].node_name == "b1-n1");  // 8 free
  CHECK(three[1].node_name == "b1-n1");  // 4 and 4: the first by name
  CHECK(three[2].node_name == "b1-n2");
  auto four = w.policy("no-gang").Place(w.nodes, Spec(4, 4, kBlock, LevelPolicy::kRequired));
  CHECK(four.size() == 3);  // the fourth finds no room; the three placed stay
}

TEST_CASE("group policies: Kueue's best fit takes the tightest domain even when whole - topofit a partly used one") {
  // Block b1: one whole node (room 4 members of 2 GPUs). Block b2: two partly used nodes (room 2 + 3).
  std::vector<SmallNode> nodes = {
      {"b1-n1", {{"spine", "s1"}, {"block", "b1"}}, {}},
      {"b2-n1", {{"spine", "s1"}, {"block", "b2"}}, GpuSet::Of({0, 1, 2, 3})},
      {"b2-n2", {{"spine", "s1"}, {"block", "b2"}}, GpuSet::Of({0, 1})},
  };
  World w(nodes);
  GroupSpec spec = Spec(4, 2, kBlock, LevelPolicy::kRequired);
  CHECK(PerNode(w.policy("kueue-bestfit").Place(w.nodes, spec)) == std::map<std::string, int>{{"b1-n1", 4}});
  // Split over b2's two partly used nodes: the larger room first, the rest by best fit.
  CHECK(PerNode(w.policy("topofit").Place(w.nodes, spec)) == std::map<std::string, int>{{"b2-n1", 1}, {"b2-n2", 3}});
  // Inside a domain Kueue takes the largest child first, then the smallest that fits the rest.
  GroupSpec five = Spec(5, 2, kBlock, LevelPolicy::kRequired);
  CHECK(PerNode(w.policy("kueue-bestfit").Place(w.nodes, five)) ==
        std::map<std::string, int>{{"b2-n1", 2}, {"b2-n2", 3}});
}

TEST_CASE("group policies: Volcano's lowest tier first, the first domain by name, nodes first fit") {
  std::vector<SmallNode> nodes = {
      {"b1-n1", {{"spine", "s1"}, {"block", "b1"}, {"host", "b1-n1"}}, GpuSet::Of({0, 1, 2, 3, 4, 5})},
      {"b1-n2", {{"spine", "s1"}, {"block", "b1"}, {"host", "b1-n2"}}, {}},
      {"b2-n1", {{"spine", "s1"}, {"block", "b2"}, {"host", "b2-n1"}}, GpuSet::Of({0, 1})},
  };
  World w(nodes);
  // Two members of 2 GPUs fit one host: the first host by name with room for both (b1-n2).
  CHECK(PerNode(w.policy("volcano-tier").Place(w.nodes, Spec(2, 2, kBlock, LevelPolicy::kRequired))) ==
        std::map<std::string, int>{{"b1-n2", 2}});
  // Five need a block: b1 (room 1 + 4) comes first by name; first fit fills b1-n1 first.
  CHECK(PerNode(w.policy("volcano-tier").Place(w.nodes, Spec(5, 2, kBlock, LevelPolicy::kRequired))) ==
        std::map<std::string, int>{{"b1-n1", 1}, {"b1-n2", 4}});
  // Required at the host level: never more than one node.
  CHECK(w.policy("volcano-tier").Place(w.nodes, Spec(5, 2, kHost, LevelPolicy::kRequired)).empty());
}

}  // namespace
}  // namespace topofit::bench

namespace topofit::bench {
namespace {

// The gb200-nvl72 replay cluster: 8 NVLink domains of 18 nodes of 4 GPUs.
struct Nvl72 {
  ReplayCluster c;
  placement::Placer placer;
  std::vector<std::unique_ptr<GroupPolicy>> policies;
  Nvl72() {
    GroupReplayOptions o;
    o.shape = "gb200-nvl72";
    REQUIRE(BuildReplayCluster(o, c).ok());
    policies = AllGroupPolicies(placer, {}, &c.shape);
  }
  int Domain(int node) const { return static_cast<int>(c.map.id(node, c.shape_levels[1])); }  // The clique.
};

GroupSpec OnePod(int gpus, int index) {
  GroupSpec s = Spec(1, gpus, 0, LevelPolicy::kPreferred);
  s.name = "pod-" + std::to_string(index);
  return s;
}

TEST_CASE("group policies: topofit's pods of no group keep off the NVLink domains its groups need") {
  Nvl72 w;
  GroupPolicy& topofit = *w.policies[0];
  topofit.Start();
  groups::GroupNodes nodes = w.c.empty;
  // An 18 x 4-GPU group fills one domain (and is learnt); one node of another domain is broken.
  GroupSpec whole = Spec(18, 4, w.c.shape_levels[1], LevelPolicy::kRequired);
  const std::vector<MemberPlan> group = topofit.Place(nodes, whole);
  REQUIRE(group.size() == 18);
  for (const MemberPlan& m : group) nodes.nodes[m.node].free = nodes.nodes[m.node].free - m.gpus;
  const int full = w.Domain(group.front().node);
  int broken_node = 0;
  while (w.Domain(broken_node) == full) ++broken_node;
  nodes.nodes[broken_node].free = nodes.nodes[broken_node].free - GpuSet::Of({0});
  const int broken = w.Domain(broken_node);
  // Each 1-GPU pod goes into the broken domain, the only one no expected group fits any more.
  for (int i = 0; i < 20; ++i) {
    const std::vector<MemberPlan> pod = topofit.PlacePod(nodes, OnePod(1, i));
    REQUIRE(pod.size() == 1);
    CHECK(w.Domain(pod[0].node) == broken);
    nodes.nodes[pod[0].node].free = nodes.nodes[pod[0].node].free - pod[0].gpus;
  }
  // The bin-packing baseline fills the broken node first too, then opens nodes anywhere.
  std::set<int> domains;
  GroupPolicy& kueue = *w.policies[2];
  kueue.Start();
  groups::GroupNodes fresh = w.c.empty;
  for (int i = 0; i < 200; ++i) {
    const std::vector<MemberPlan> pod = kueue.PlacePod(fresh, OnePod(4, i));
    if (pod.empty()) break;
    domains.insert(w.Domain(pod[0].node));
    fresh.nodes[pod[0].node].free = fresh.nodes[pod[0].node].free - pod[0].gpus;
    if (domains.size() > 1) break;
  }
  CHECK(domains.size() > 1);  // Whole 4-GPU pods on whole nodes at random: not one domain.
}

}  // namespace
}  // namespace topofit::bench
