#include "bench/groups_policies.h"

#include <algorithm>
#include <optional>

#include "extender/groups/domain_tree.h"

namespace topofit::bench {

namespace {

using groups::DomainTree;
using groups::GroupNodes;
using groups::GroupSpec;
using groups::MemberPlan;

class TopofitGroups : public GroupPolicy {
 public:
  TopofitGroups(const placement::Placer& placer, groups::GroupShapeOptions options)
      : placer_(placer), options_(options) {}
  std::string name() const override { return "topofit"; }
  // As topofit serve learns: each group arriving is observed before it is planned (GroupPlanner).
  void Start() override { expected_ = std::make_unique<groups::GroupShapeEstimate>(options_); }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    if (!expected_) Start();
    groups::GroupPlan plan = groups::GroupPlanner(placer_, expected_.get()).Plan(nodes, spec);
    return plan.ok ? plan.members : std::vector<MemberPlan>{};
  }

 private:
  const placement::Placer& placer_;
  const groups::GroupShapeOptions options_;
  std::unique_ptr<groups::GroupShapeEstimate> expected_;
};

class NoGang : public GroupPolicy {
 public:
  explicit NoGang(const placement::Placer& placer) : placer_(placer) {}
  std::string name() const override { return "no-gang"; }
  bool gang() const override { return false; }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    std::vector<GpuSet> free;
    for (const groups::GroupNode& n : nodes.nodes) free.push_back(n.free & n.usable);
    std::vector<MemberPlan> out;
    for (int m = 0; m < spec.size; ++m) {
      std::optional<size_t> best;
      placement::PlacerChoice chosen;
      for (size_t i = 0; i < nodes.nodes.size(); ++i) {
        if (!nodes.nodes[i].topology || (best && free[i].size() <= free[*best].size())) continue;
        placement::PlacerChoice c = placer_.Choose(*nodes.nodes[i].topology, free[i], spec.gpus, spec.intent);
        if (!c.found) continue;
        best = i;
        chosen = c;
      }
      if (!best) break;
      free[*best] = free[*best] - chosen.gpus;
      out.push_back(MemberPlan{static_cast<int>(*best), nodes.domains->name(*best), chosen.gpus, chosen.ring_mbps,
                               chosen.meets_min_link});
    }
    return out;
  }

 private:
  const placement::Placer& placer_;
};

// The members a tree's leaf gives: its first r sets.
void FromLeaf(const DomainTree& t, int leaf, int r, std::vector<MemberPlan>* out) {
  const groups::TreeUnit& u = t.unit(leaf);
  for (int j = 0; j < r; ++j) out->push_back(MemberPlan{u.node, u.name, u.sets[j].gpus, u.sets[j].ring_mbps, true});
}

// The levels a spec may use, narrowest first for `ascending`, else from the spec's level upwards;
// -1 is the whole cluster (preferred only).
std::vector<int> Levels(const DomainTree& t, const GroupSpec& spec, bool from_lowest) {
  std::vector<int> out;
  const auto& chain = t.chain();
  if (from_lowest) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (*it >= spec.level) out.push_back(*it);
    }
    if (out.empty() || out.back() != spec.level) out.push_back(spec.level);
  } else {
    out.push_back(spec.level);
  }
  if (spec.policy == groups::LevelPolicy::kPreferred) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (*it < spec.level) out.push_back(*it);
    }
    out.push_back(-1);
  }
  return out;
}

// Members to try: all, then the min-count when fewer (a gang of min_count).
std::vector<int> Wants(const GroupSpec& spec) {
  if (spec.min_count < spec.size) return {spec.size, spec.min_count};
  return {spec.size};
}

std::vector<int> UnitsOf(const DomainTree& t, int level) {
  return level < 0 ? std::vector<int>{DomainTree::kRoot} : t.UnitsAt(level);
}

class KueueBestFit : public GroupPolicy {
 public:
  explicit KueueBestFit(const placement::Placer& placer) : placer_(placer) {}
  std::string name() const override { return "kueue-bestfit"; }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    DomainTree t(nodes, placer_, spec.gpus, spec.intent, spec.size);
    for (int m : Wants(spec)) {
      for (int level : Levels(t, spec, false)) {
        std::optional<int> fit = SmallestFit(t, UnitsOf(t, level), m);
        if (!fit) continue;
        std::vector<MemberPlan> out;
        Fill(t, *fit, m, &out);
        return out;
      }
    }
    return {};
  }

 private:
  // The unit of least capacity that still takes r (ties by name).
  static std::optional<int> SmallestFit(const DomainTree& t, const std::vector<int>& units, int r) {
    std::optional<int> fit;
    for (int u : units) {
      const auto& x = t.unit(u);
      if (x.capacity < r) continue;
      if (!fit || x.capacity < t.unit(*fit).capacity ||
          (x.capacity == t.unit(*fit).capacity && x.name < t.unit(*fit).name)) {
        fit = u;
      }
    }
    return fit;
  }
  static void Fill(const DomainTree& t, int unit, int r, std::vector<MemberPlan>* out) {
    if (t.IsLeaf(unit)) return FromLeaf(t, unit, r, out);
    std::vector<int> pool = t.unit(unit).children;
    while (r > 0) {
      if (auto fit = SmallestFit(t, pool, r)) return Fill(t, *fit, r, out);
      auto largest = std::min_element(pool.begin(), pool.end(), [&](int a, int b) {
        if (t.unit(a).capacity != t.unit(b).capacity) return t.unit(a).capacity > t.unit(b).capacity;
        return t.unit(a).name < t.unit(b).name;
      });
      const int c = *largest;
      pool.erase(largest);
      Fill(t, c, t.unit(c).capacity, out);
      r -= t.unit(c).capacity;
    }
  }
  const placement::Placer& placer_;
};

class VolcanoTier : public GroupPolicy {
 public:
  explicit VolcanoTier(const placement::Placer& placer) : placer_(placer) {}
  std::string name() const override { return "volcano-tier"; }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    DomainTree t(nodes, placer_, spec.gpus, spec.intent, spec.size);
    for (int m : Wants(spec)) {  // minAvailable: the gang's minimum
      for (int level : Levels(t, spec, true)) {
        for (int u : UnitsOf(t, level)) {  // name order
          if (t.unit(u).capacity < m) continue;
          std::vector<MemberPlan> out;
          FirstFit(t, u, m, &out);
          return out;
        }
      }
    }
    return {};
  }

 private:
  // Nodes in name order, each taking what it can.
  static int FirstFit(const DomainTree& t, int unit, int r, std::vector<MemberPlan>* out) {
    if (t.IsLeaf(unit)) {
      const int take = std::min(r, t.unit(unit).capacity);
      FromLeaf(t, unit, take, out);
      return take;
    }
    int given = 0;
    for (int c : t.unit(unit).children) {
      if (given == r) break;
      given += FirstFit(t, c, r - given, out);
    }
    return given;
  }
  const placement::Placer& placer_;
};

}  // namespace

std::vector<std::unique_ptr<GroupPolicy>> AllGroupPolicies(const placement::Placer& placer,
                                                          groups::GroupShapeOptions expected) {
  std::vector<std::unique_ptr<GroupPolicy>> out;
  out.push_back(std::make_unique<TopofitGroups>(placer, expected));
  out.push_back(std::make_unique<NoGang>(placer));
  out.push_back(std::make_unique<KueueBestFit>(placer));
  out.push_back(std::make_unique<VolcanoTier>(placer));
  return out;
}

}  // namespace topofit::bench
