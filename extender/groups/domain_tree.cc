#include "extender/groups/domain_tree.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace topofit::groups {

namespace {

// The sets members get on one node, one after another by the Placer's rule, at most max_members.
std::vector<placement::PlacerChoice> LeafSets(const placement::Placer& placer, const Topology& topology, GpuSet free,
                                              int gpus, const cluster::PodIntent& intent, int max_members) {
  std::vector<placement::PlacerChoice> sets;
  if (gpus >= 1) sets.reserve(std::min(max_members, free.size() / gpus));
  while (gpus >= 1 && static_cast<int>(sets.size()) < max_members) {
    placement::PlacerChoice c = placer.Choose(topology, free, gpus, intent);
    if (!c.found) break;
    free = free - c.gpus;
    sets.push_back(c);
  }
  return sets;
}

}  // namespace

int DomainTree::AddUnit(int depth, int level, std::string name, int parent) {
  TreeUnit u;
  u.depth = depth;
  u.level = level;
  u.name = std::move(name);
  u.parent = parent;
  units_.push_back(std::move(u));
  const int id = static_cast<int>(units_.size()) - 1;
  if (parent >= 0) units_[parent].children.push_back(id);
  if (static_cast<int>(by_depth_.size()) <= depth) by_depth_.resize(depth + 1);
  by_depth_[depth].push_back(id);
  return id;
}

DomainTree::DomainTree(const GroupNodes& nodes, const placement::Placer& placer, int gpus,
                       const cluster::PodIntent& intent, int max_members) {
  const DomainMap& map = *nodes.domains;
  for (int l = 0; l < map.levels().size(); ++l) {
    if (map.used(l)) chain_.push_back(l);
  }
  AddUnit(0, -1, "", -1);
  // The unit each node hangs under, deepest so far.
  std::vector<int> under(map.size(), kRoot);
  for (size_t c = 0; c < chain_.size(); ++c) {
    const int level = chain_[c];
    std::vector<int> unit_of(map.domain_count(level), -1);  // By the level's dense id.
    for (size_t i = 0; i < map.size(); ++i) {
      const uint32_t id = map.id(i, level);
      if (unit_of[id] < 0) unit_of[id] = AddUnit(static_cast<int>(c) + 1, level, map.domain_name(level, id), under[i]);
      under[i] = unit_of[id];
    }
  }
  const int leaf_depth = static_cast<int>(chain_.size()) + 1;
  leaves_.assign(map.size(), -1);
  units_.reserve(units_.size() + map.size());
  // A node's sets depend only on its topology and free GPUs: most nodes of a cluster share a few.
  std::unordered_map<uint64_t, std::pair<const Topology*, size_t>> sets_of;  // -> index into sets_
  for (size_t i = 0; i < map.size(); ++i) {
    const int u = AddUnit(leaf_depth, -1, map.name(i), under[i]);
    leaves_[i] = u;
    units_[u].node = static_cast<int>(i);
    const GroupNode& n = nodes.nodes[i];
    if (!n.topology) continue;
    TreeUnit& leaf = units_[u];
    const GpuSet free = n.free & n.usable;
    leaf.free_gpus = free.size();
    leaf.usable_gpus = n.usable.size();
    const uint64_t key = (reinterpret_cast<uintptr_t>(n.topology) * 0x9E3779B97F4A7C15ull) ^ free.mask();
    auto [it, added] = sets_of.try_emplace(key, n.topology, sets_.size());
    if (added || it->second.first != n.topology) {  // New, or a hash collision: computed, not shared.
      sets_.push_back(LeafSets(placer, *n.topology, free, gpus, intent, max_members));
      leaf.sets = sets_.back();
    } else {
      leaf.sets = sets_[it->second.second];
    }
    leaf.capacity = static_cast<int>(leaf.sets.size());
    leaf.best_ring = leaf.sets.empty() ? 0 : leaf.sets[0].ring_mbps;
  }
  // Sums, deepest first (a child always has a larger index than its parent).
  for (int u = size() - 1; u > kRoot; --u) {
    TreeUnit& p = units_[units_[u].parent];
    p.capacity += units_[u].capacity;
    p.free_gpus += units_[u].free_gpus;
    p.usable_gpus += units_[u].usable_gpus;
    p.best_ring = std::max(p.best_ring, units_[u].best_ring);
  }
  for (TreeUnit& u : units_) {
    std::sort(u.children.begin(), u.children.end(), [&](int a, int b) { return units_[a].name < units_[b].name; });
  }
}

std::vector<int> DomainTree::UnitsAt(int level) const {
  auto it = std::find(chain_.begin(), chain_.end(), level);
  if (it == chain_.end()) return leaves_;
  return by_depth_[(it - chain_.begin()) + 1];
}

bool DomainTree::BestFitLess(int a, int b) const {
  const TreeUnit& x = units_[a];
  const TreeUnit& y = units_[b];
  if (x.whole_free() != y.whole_free()) return !x.whole_free();
  if (x.capacity != y.capacity) return x.capacity < y.capacity;
  if (x.free_gpus != y.free_gpus) return x.free_gpus < y.free_gpus;
  for (int p = x.parent, q = y.parent; p > kRoot && q > kRoot && p != q; p = units_[p].parent, q = units_[q].parent) {
    if (units_[p].free_gpus != units_[q].free_gpus) return units_[p].free_gpus < units_[q].free_gpus;
  }
  if (x.best_ring != y.best_ring) return x.best_ring > y.best_ring;
  return x.name < y.name;
}

}  // namespace topofit::groups

namespace topofit::groups {

bool DomainTree::SplitLess(int a, int b) const {
  const TreeUnit& x = units_[a];
  const TreeUnit& y = units_[b];
  if (x.whole_free() != y.whole_free()) return !x.whole_free();
  if (x.capacity != y.capacity) return x.capacity > y.capacity;
  return BestFitLess(a, b);
}

}  // namespace topofit::groups
