#include "extender/groups/group_planner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "extender/groups/domain_fragmentation.h"
#include "extender/groups/domain_tree.h"
#include "topology/link_class.h"

namespace topofit::groups {

int GroupPlan::gpus() const {
  int n = 0;
  for (const MemberPlan& m : members) n += m.gpus.size();
  return n;
}

namespace {

using Picked = std::vector<std::pair<int, int>>;  // (leaf unit, set index) per member.

// Fill(unit, r): the members `unit` gives, r of them (r <= its capacity). Where the planner chooses
// between units that can take the members, the one whose fill DomainFragmentation scores lowest
// wins, then the first by BestFitLess (with no shape expected: BestFitLess alone). A node's fill is
// its first r sets; a domain's fills are memoised by (unit, r), so comparing them costs each once.
class Filler {
 public:
  Filler(const DomainTree& t, const DomainFragmentationScore& frag, int gpus, bool bounds)
      : t_(t), frag_(frag), gpus_(gpus), bounds_(bounds) {
    memo_.reserve(256);  // A plan compares some hundreds of fills (every block of a 5,000-node cluster).
  }

  const Picked& Fill(int unit, int r) { return Memo(unit, r).first; }

  // The unit of `units` that can take r members and is preferred filled with them (nullopt: none can).
  std::optional<int> Best(std::span<const int> units, int r) {
    if (!frag_.enabled()) return BestFit(units, r);
    if (!bounds_) return BestOfAll(units, r);
    // Candidates by their loss's lower bound, then BestFitLess: a unit is filled only when it could
    // still win - its bound below the best loss so far, or tying with it and earlier by BestFitLess.
    // The unit chosen is the one a fill of every candidate would choose.
    std::vector<std::pair<double, int>> by_bound;
    for (int u : units) {
      if (t_.unit(u).capacity >= r) by_bound.emplace_back(Bound(u, r), u);
    }
    std::sort(by_bound.begin(), by_bound.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : t_.BestFitLess(a.second, b.second);
    });
    std::optional<int> best;
    double best_loss = 0;
    for (const auto& [bound, u] : by_bound) {
      if (best && bound > best_loss + kTie) break;  // Bounds only grow from here.
      if (best && bound >= best_loss - kTie && !t_.BestFitLess(u, *best)) continue;  // At best a tie it loses.
      Consider(u, Loss(u, r), &best, &best_loss);
    }
    return best;
  }

  // Best without the bounds: every candidate filled, in the order given (GroupPlanner::set_bounds).
  std::optional<int> BestOfAll(std::span<const int> units, int r) {
    std::optional<int> best;
    double best_loss = 0;
    for (int u : units) {
      if (t_.unit(u).capacity >= r) Consider(u, Loss(u, r), &best, &best_loss);
    }
    return best;
  }

 private:
  static constexpr double kTie = 1e-9;  // Losses are sums of shares x GPUs: equal within rounding.

  // The rule of step 2: the least loss, and among equal losses the first by BestFitLess.
  void Consider(int u, double loss, std::optional<int>* best, double* best_loss) const {
    const bool tie = *best && std::abs(loss - *best_loss) <= kTie;
    if (!*best || (tie ? t_.BestFitLess(u, **best) : loss < *best_loss)) {
      *best = u;
      *best_loss = loss;
    }
  }

  // The first unit by BestFitLess that can take r members: the order alone, when no shape is expected.
  std::optional<int> BestFit(std::span<const int> units, int r) const {
    std::optional<int> best;
    for (int u : units) {
      if (t_.unit(u).capacity >= r && (!best || t_.BestFitLess(u, *best))) best = u;
    }
    return best;
  }

  // A lower bound of Loss(unit, r) that needs no fill: the exact loss of a node; for a domain,
  // DomainFragmentationScore::LowerBound over its nodes' slack.
  double Bound(int unit, int r) {
    if (t_.IsLeaf(unit)) return Loss(unit, r);
    const TreeUnit& u = t_.unit(unit);
    return frag_.LowerBound(AnyNode(unit), u.level, Slack(unit), r * gpus_);
  }

  // The unit's nodes' summed slack per shape (DomainFragmentationScore::AddSlack), memoised by unit.
  std::span<const int> Slack(int unit) {
    const size_t n = frag_.shape_count();
    if (slack_.empty()) {
      slack_.assign(static_cast<size_t>(t_.size()) * n, 0);
      slack_known_.assign(t_.size(), false);
    }
    std::span<int> mine(slack_.data() + static_cast<size_t>(unit) * n, n);
    if (!slack_known_[unit]) {
      const TreeUnit& u = t_.unit(unit);
      if (t_.IsLeaf(unit)) frag_.AddSlack(u.node, mine);
      for (int c : u.children) {
        std::span<const int> theirs = Slack(c);
        for (size_t i = 0; i < n; ++i) mine[i] += theirs[i];
      }
      slack_known_[unit] = true;
    }
    return mine;
  }

  int AnyNode(int unit) const {
    while (!t_.IsLeaf(unit) && !t_.unit(unit).children.empty()) unit = t_.unit(unit).children.front();
    return t_.unit(unit).node;
  }

  // A node's fill takes its first r sets: scored without building it.
  double Loss(int unit, int r) {
    if (!t_.IsLeaf(unit)) return Memo(unit, r).second;
    return frag_.ScoreNode(t_.unit(unit).node, r * gpus_);  // Every set has the members' GPUs.
  }

  const std::pair<Picked, double>& Memo(int unit, int r) {
    const uint64_t key = (uint64_t(uint32_t(unit)) << 32) | uint32_t(r);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    Picked out;
    if (t_.IsLeaf(unit)) {
      for (int j = 0; j < r; ++j) out.emplace_back(unit, j);
    } else {
      FillChildren(unit, r, &out);
    }
    double loss = 0;
    if (frag_.enabled()) {
      takes_.clear();  // A leaf's members are adjacent in a fill: one take per leaf.
      for (const auto& [leaf, j] : out) {
        const int node = t_.unit(leaf).node;
        if (!takes_.empty() && takes_.back().node == node) takes_.back().gpus += gpus_;
        else takes_.push_back({node, gpus_});
      }
      loss = frag_.Score(takes_);
    }
    return memo_.emplace(key, std::make_pair(std::move(out), loss)).first->second;
  }

  void FillChildren(int unit, int r, Picked* out) {
    std::vector<int> pool;
    for (int c : t_.unit(unit).children) {
      if (t_.unit(c).capacity > 0) pool.push_back(c);
    }
    auto append = [&](int c, int n) {
      if (t_.IsLeaf(c)) {
        for (int j = 0; j < n; ++j) out->emplace_back(c, j);
        return;
      }
      const Picked& p = Fill(c, n);
      out->insert(out->end(), p.begin(), p.end());
    };
    // Descend into the child that holds all r, when one can.
    if (auto fit = Best(pool, r)) return append(*fit, r);
    // Split: use up the children in SplitLess order - partly used first (largest first); a whole-free
    // child takes the rest only when no partly used one is left.
    std::sort(pool.begin(), pool.end(), [&](int a, int b) { return t_.SplitLess(a, b); });
    int partial_left = static_cast<int>(
        std::count_if(pool.begin(), pool.end(), [&](int c) { return !t_.unit(c).whole_free(); }));
    std::vector<int> most(pool.size() + 1, 0);  // most[i]: the largest capacity among pool[i..].
    for (size_t i = pool.size(); i-- > 0;) most[i] = std::max(most[i + 1], t_.unit(pool[i]).capacity);
    for (size_t next = 0; r > 0 && next < pool.size(); ++next) {
      const std::optional<int> fit =
          most[next] >= r ? Best(std::span<const int>(pool).subspan(next), r) : std::nullopt;
      if (fit && (!t_.unit(*fit).whole_free() || partial_left == 0)) return append(*fit, r);
      const int c = pool[next];
      partial_left -= !t_.unit(c).whole_free();
      append(c, t_.unit(c).capacity);
      r -= t_.unit(c).capacity;
    }
  }

  const DomainTree& t_;
  const DomainFragmentationScore& frag_;
  const int gpus_;  // Per member.
  const bool bounds_;
  std::unordered_map<uint64_t, std::pair<Picked, double>> memo_;  // By (unit, r).
  std::vector<NodeTake> takes_;  // Memo's scratch.
  std::vector<int> slack_;        // Slack's memo: shape_count() per unit.
  std::vector<bool> slack_known_;
};

// The deepest unit that is an ancestor of (or is) every given leaf.
int CommonAncestor(const DomainTree& t, const std::vector<std::pair<int, int>>& members) {
  int a = members.front().first;
  for (const auto& [leaf, _] : members) {
    int b = leaf;
    while (t.unit(a).depth > t.unit(b).depth) a = t.unit(a).parent;
    while (t.unit(b).depth > t.unit(a).depth) b = t.unit(b).parent;
    while (a != b) {
      a = t.unit(a).parent;
      b = t.unit(b).parent;
    }
  }
  return a;
}

std::string LevelName(const DomainMap& map, int level) {
  return level < 0 ? "cluster" : map.levels().levels[level].name;
}

std::string Members(const GroupSpec& spec) {
  std::string what = fmt::format("{} member{}", spec.size, spec.size == 1 ? "" : "s");
  if (spec.min_count < spec.size) what += fmt::format(" (nor the min-count {})", spec.min_count);
  std::string each = fmt::format("{} GPU{}", spec.gpus, spec.gpus == 1 ? "" : "s");
  if (auto min = spec.intent.EffectiveMinLink(); min && spec.gpus > 1) {
    each += fmt::format(" with every pair at least {}", ToString(*min));
  }
  return what + " of " + each;
}

// The unit of the most room among `units` (ties: the first by name).
int MostRoom(const DomainTree& t, const std::vector<int>& units) {
  int best = units.front();
  for (int u : units) {
    const auto& x = t.unit(u);
    const auto& y = t.unit(best);
    if (x.capacity > y.capacity || (x.capacity == y.capacity && x.name < y.name)) best = u;
  }
  return best;
}

// Lines explaining how `level` splits the nodes, when some carry none of its labels.
void NoteMissing(const DomainMap& map, int level, std::vector<std::string>* notes) {
  const std::string& name = map.levels().levels[level].name;
  if (!map.used(level)) {
    notes->push_back(fmt::format("no node carries a {} label ({}): every node is a {} of its own", name,
                                 fmt::join(map.levels().levels[level].keys, ", "), name));
  } else if (int n = map.missing_count(level); n > 0) {
    notes->push_back(fmt::format("{} node{} carr{} no {} label: each is a {} of its own", n, n == 1 ? "" : "s",
                                 n == 1 ? "ies" : "y", name, name));
  }
}

std::optional<std::string> Invalid(const GroupNodes& nodes, const GroupSpec& spec) {
  if (!nodes.domains) return "no domain map";
  if (spec.gpus < 1) return fmt::format("group {} asks for no GPUs", spec.key());
  if (spec.size < 1 || spec.min_count < 1 || spec.min_count > spec.size) {
    return fmt::format("group {}: size {} and min-count {} are not 1 <= min-count <= size", spec.key(), spec.size,
                       spec.min_count);
  }
  if (spec.level < 0 || spec.level >= nodes.domains->levels().size()) {
    return fmt::format("group {}: level {} is not one of the {} levels", spec.key(), spec.level,
                       nodes.domains->levels().size());
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The levels a spec searches, in order; -1 is the whole cluster.
std::vector<int> SearchOrder(const DomainMap& map, const GroupSpec& spec) {
  std::vector<int> search = {spec.level};
  if (spec.policy == LevelPolicy::kPreferred) {
    for (int l = spec.level - 1; l >= 0; --l) {
      if (map.used(l)) search.push_back(l);
    }
    search.push_back(-1);
  }
  return search;
}

// The plan of m members inside `unit`, chosen at `level`.
void Realize(const DomainTree& tree, Filler& filler, const DomainMap& map, int unit, int level, int m,
             GroupPlan* plan) {
  const Picked& picked = filler.Fill(unit, m);
  plan->ok = true;
  plan->searched_level = level;
  plan->searched_domain = tree.unit(unit).name;
  plan->min_ring_mbps = UINT32_MAX;
  for (const auto& [leaf, j] : picked) {
    const TreeUnit& u = tree.unit(leaf);
    const placement::PlacerChoice& c = u.sets[j];
    plan->members.push_back(MemberPlan{u.node, u.name, c.gpus, c.ring_mbps, c.meets_min_link});
    plan->min_ring_mbps = std::min(plan->min_ring_mbps, c.ring_mbps);
  }
  const int holder = CommonAncestor(tree, picked);
  plan->holding_level = tree.IsLeaf(holder) ? map.levels().size() : tree.unit(holder).level;
  plan->holding_domain = tree.unit(holder).name;
}

std::string NoPlanReason(const DomainTree& tree, const DomainMap& map, const GroupSpec& spec, int last) {
  if (last < 0) {
    return fmt::format("the cluster has room for {} of {}", tree.unit(DomainTree::kRoot).capacity, Members(spec));
  }
  const int best = MostRoom(tree, tree.UnitsAt(last));
  return fmt::format("no {} can take {}: the best, {}, has room for {}", LevelName(map, last), Members(spec),
                     tree.unit(best).name, tree.unit(best).capacity);
}

}  // namespace

GroupPlan GroupPlanner::Plan(const GroupNodes& nodes, const GroupSpec& spec) const {
  GroupPlan plan;
  if (auto bad = Invalid(nodes, spec)) {
    plan.reason = *bad;
    return plan;
  }
  const DomainMap& map = *nodes.domains;
  DomainTree tree(nodes, placer_, spec.gpus, spec.intent, spec.size);
  DomainFragmentationScore frag;
  if (expected_) {
    expected_->Observe(spec);
    frag.PreScore(nodes, *expected_->Snapshot());
  }
  Filler filler(tree, frag, spec.gpus, bounds_);
  NoteMissing(map, spec.level, &plan.notes);
  const std::vector<int> search = SearchOrder(map, spec);
  std::vector<int> wants = {spec.size};
  if (spec.min_count < spec.size) wants.push_back(spec.min_count);
  for (int m : wants) {
    for (int level : search) {
      std::vector<int> units = level < 0 ? std::vector<int>{DomainTree::kRoot} : tree.UnitsAt(level);
      const std::optional<int> best = filler.Best(units, m);
      if (!best) continue;
      Realize(tree, filler, map, *best, level, m, &plan);
      if (level != spec.level) {
        plan.notes.push_back(fmt::format("preferred {}: none can take {} members; placed within {}",
                                         LevelName(map, spec.level), m,
                                         level < 0 ? "the whole cluster"
                                                   : LevelName(map, level) + " " + plan.searched_domain));
      }
      if (m < spec.size) {
        plan.notes.push_back(fmt::format("placed {} of {} members (the min-count): {} all {}", m, spec.size,
                                         search.back() < 0 ? "the cluster cannot take"
                                                           : "no " + LevelName(map, spec.level) + " can take",
                                         spec.size));
      }
      return plan;
    }
  }
  plan.reason = NoPlanReason(tree, map, spec, search.back());
  return plan;
}

GroupPlan GroupPlanner::Plan(const cluster::ClusterModel& model, const DomainMap& domains, const GroupSpec& spec) const {
  return Plan(ReadGroupNodes(model, domains), spec);
}

void Take(GroupNodes& nodes, std::span<const MemberPlan> members) {
  for (const MemberPlan& m : members) nodes.nodes[m.node].free = nodes.nodes[m.node].free - m.gpus;
}

void Take(GroupNodes& nodes, const GroupPlan& plan) { Take(nodes, plan.members); }

void GiveBack(GroupNodes& nodes, std::span<const MemberPlan> members) {
  for (const MemberPlan& m : members) nodes.nodes[m.node].free = nodes.nodes[m.node].free | m.gpus;
}

}  // namespace topofit::groups
