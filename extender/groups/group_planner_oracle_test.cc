// The planner against brute force on small clusters (2 blocks x 3 nodes x 8 GPUs, random free GPUs,
// groups of 1-4 members): a plan exists exactly when enumeration finds one within the allowed levels,
// no GPU is planned twice, and the chosen domain is the first by the written rule (group_planner.h),
// computed here from the cluster alone.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include <doctest/doctest.h>

#include "extender/groups/group_planner.h"
#include "extender/groups/testing/small_clusters.h"

namespace topofit::groups {
namespace {

using testing::SmallNode;

struct Case {
  std::vector<SmallNode> nodes;
  GroupSpec spec;
};

// Members node i can take: best-effort sets need only k free GPUs each (the set choice never changes
// the count), so floor(free / k) - counted here without the Placer.
std::vector<int> BruteCapacity(const GroupNodes& g, int k) {
  std::vector<int> cap;
  for (const GroupNode& n : g.nodes) cap.push_back(n.topology ? n.free.size() / k : 0);
  return cap;
}

// True when some assignment of m members to nodes (x_i <= cap_i, sum m) puts every member in `domain`
// at `level` (-1: anywhere) - by enumerating every vector x.
bool Exists(const DomainMap& map, const std::vector<int>& cap, int m, int level, uint32_t domain) {
  std::vector<int> x(cap.size(), 0);
  std::function<bool(size_t, int)> rec = [&](size_t i, int left) {
    if (i == cap.size()) return left == 0;
    const bool inside = level < 0 || map.id(i, level) == domain;
    for (int v = 0; v <= (inside ? std::min(cap[i], left) : 0); ++v) {
      if (rec(i + 1, left - v)) return true;
    }
    return false;
  };
  return rec(0, m);
}

// The written rule's key of a domain at `level`: whole-free last, capacity, free GPUs, the parents' free
// GPUs (parent first), the best first-member ring (faster first), the name.
using Key = std::tuple<bool, int, int, std::vector<int>, int64_t, std::string>;
Key RuleKey(const GroupNodes& g, const std::vector<int>& cap, const placement::Placer& placer, const GroupSpec& spec,
            int level, uint32_t domain) {
  const DomainMap& map = *g.domains;
  int c = 0, free = 0, usable = 0;
  uint32_t ring = 0;
  std::vector<int> parents;
  for (int p = level - 1; p >= 0; --p) {
    if (!map.used(p)) continue;
    int pfree = 0;
    for (size_t i = 0; i < map.size(); ++i) {
      if (map.id(i, level) == domain) {
        for (size_t j = 0; j < map.size(); ++j) {
          if (map.id(j, p) == map.id(i, p) && g.nodes[j].topology) pfree += g.nodes[j].free.size();
        }
        break;
      }
    }
    parents.push_back(pfree);
  }
  for (size_t i = 0; i < map.size(); ++i) {
    if (map.id(i, level) != domain || !g.nodes[i].topology) continue;
    c += std::min(cap[i], spec.size);
    free += g.nodes[i].free.size();
    usable += g.nodes[i].usable.size();
    if (cap[i] > 0) ring = std::max(ring, placer.Choose(*g.nodes[i].topology, g.nodes[i].free, spec.gpus, spec.intent).ring_mbps);
  }
  const bool whole = usable > 0 && free == usable;
  return {whole, c, free, parents, -static_cast<int64_t>(ring), map.domain_name(level, domain)};
}

struct Expected {
  bool ok = false;
  int members = 0;
  int level = -1;
  std::optional<uint32_t> domain;  // nullopt for the whole cluster
};

Expected Oracle(const GroupNodes& g, const placement::Placer& placer, const GroupSpec& spec) {
  const DomainMap& map = *g.domains;
  std::vector<int> cap = BruteCapacity(g, spec.gpus);
  std::vector<int> search = {spec.level};
  if (spec.policy == LevelPolicy::kPreferred) {
    for (int l = spec.level - 1; l >= 0; --l) {
      if (map.used(l)) search.push_back(l);
    }
    search.push_back(-1);
  }
  std::vector<int> wants = {spec.size};
  if (spec.min_count < spec.size) wants.push_back(spec.min_count);
  for (int m : wants) {
    for (int level : search) {
      if (level < 0) {
        if (Exists(map, cap, m, -1, 0)) return {true, m, -1, std::nullopt};
        continue;
      }
      std::optional<std::pair<Key, uint32_t>> best;
      for (uint32_t d = 0; d < map.domain_count(level); ++d) {
        if (!Exists(map, cap, m, level, d)) continue;
        Key k = RuleKey(g, cap, placer, spec, level, d);
        if (!best || k < best->first) best = {k, d};
      }
      if (best) return {true, m, level, best->second};
    }
  }
  return {};
}

Case RandomCase(std::mt19937_64& rng, bool with_unlabelled) {
  Case c;
  c.nodes = testing::Blocks(2, 3);
  std::uniform_real_distribution<double> p(0.0, 0.9);
  for (SmallNode& n : c.nodes) n.held = testing::RandomHeld(rng, 8, p(rng));
  if (with_unlabelled) c.nodes[rng() % c.nodes.size()].labels.erase("block");
  const int ks[] = {1, 2, 4, 8};
  c.spec.namespace_ = "ml";
  c.spec.name = "g";
  c.spec.gpus = ks[rng() % 4];
  c.spec.size = 1 + static_cast<int>(rng() % 4);
  c.spec.min_count = 1 + static_cast<int>(rng() % c.spec.size);
  c.spec.level = 1 + static_cast<int>(rng() % 2);  // block or host
  c.spec.policy = rng() % 2 ? LevelPolicy::kRequired : LevelPolicy::kPreferred;
  return c;
}

void CheckPlan(const GroupNodes& g, const GroupPlan& plan, const Expected& want, const GroupSpec& spec) {
  REQUIRE(plan.ok == want.ok);
  if (!want.ok) {
    CHECK_FALSE(plan.reason.empty());
    return;
  }
  const DomainMap& map = *g.domains;
  REQUIRE(static_cast<int>(plan.members.size()) == want.members);
  CHECK(plan.searched_level == want.level);
  std::map<int, GpuSet> given;
  for (const MemberPlan& m : plan.members) {
    CHECK(m.gpus.size() == spec.gpus);
    CHECK(m.gpus.IsSubsetOf(g.nodes[m.node].free));  // only free GPUs
    CHECK_FALSE(m.gpus.Intersects(given[m.node]));     // never a GPU twice
    given[m.node] = given[m.node] | m.gpus;
    CHECK(m.node_name == map.name(m.node));
    if (want.domain) CHECK(map.id(m.node, want.level) == *want.domain);  // inside the rule's domain
  }
  if (want.domain) {
    // A level nobody labels has one-node domains, named by the node.
    const size_t node = plan.members.front().node;
    CHECK(plan.searched_domain == (map.used(want.level) ? map.domain_name(want.level, *want.domain) : map.name(node)));
  }
}

TEST_CASE("group planner oracle: random small clusters, best-effort members, all levels and policies") {
  std::mt19937_64 rng(20260728);
  placement::Placer placer;
  GroupPlanner planner(placer);
  int planned = 0, refused = 0, fallbacks = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    Case c = RandomCase(rng, iter % 5 == 0);
    cluster::ClusterModel model;
    testing::AddNodes(model, c.nodes, iter % 2 ? "hgx-h100-8" : "pcie-8-dual-socket", 8);
    DomainMap map = DomainMap::FromModel(model, testing::SmallLevels());
    GroupNodes g = ReadGroupNodes(model, map);
    GroupPlan plan = planner.Plan(g, c.spec);
    Expected want = Oracle(g, placer, c.spec);
    CAPTURE(iter);
    CheckPlan(g, plan, want, c.spec);
    planned += plan.ok;
    refused += !plan.ok;
    fallbacks += plan.ok && plan.searched_level != c.spec.level;
  }
  // The random cases reach every outcome.
  CHECK(planned > 300);
  CHECK(refused > 50);
  CHECK(fallbacks > 20);
}

TEST_CASE("group planner oracle: a group asking a level nobody labels gets one-node domains") {
  std::mt19937_64 rng(7);
  placement::Placer placer;
  GroupPlanner planner(placer);
  for (int iter = 0; iter < 100; ++iter) {
    Case c = RandomCase(rng, false);
    for (SmallNode& n : c.nodes) n.labels.erase("host");
    c.spec.level = 2;  // host: unused now
    cluster::ClusterModel model;
    testing::AddNodes(model, c.nodes, "hgx-h100-8", 8);
    DomainMap map = DomainMap::FromModel(model, testing::SmallLevels());
    REQUIRE_FALSE(map.used(2));
    GroupNodes g = ReadGroupNodes(model, map);
    GroupPlan plan = planner.Plan(g, c.spec);
    CAPTURE(iter);
    CheckPlan(g, plan, Oracle(g, placer, c.spec), c.spec);
  }
}

}  // namespace
}  // namespace topofit::groups
