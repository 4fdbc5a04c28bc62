#include "extender/groups/domain_fragmentation.h"

#include <algorithm>

namespace topofit::groups {

void DomainFragmentationScore::PreScore(const GroupNodes& nodes, const GroupShapeSnapshot& shapes) {
  shapes_.clear();
  if (!nodes.domains) return;
  const DomainMap& map = *nodes.domains;
  const size_t n = nodes.nodes.size();
  free_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const GroupNode& node = nodes.nodes[i];
    if (node.topology) free_[i] = (node.free & node.usable).size();
  }
  domain_.assign(map.levels().size(), {});
  for (const GroupShape& g : shapes.shapes) {
    if (g.level < 0 || g.level >= map.levels().size() || g.gpus < 1 || g.members < 1) continue;
    std::vector<int>& domain = domain_[g.level];
    if (domain.empty()) {  // A level no node carries: every node a domain of its own.
      domain.resize(n);
      for (size_t i = 0; i < n; ++i) domain[i] = static_cast<int>(map.used(g.level) ? map.id(i, g.level) : i);
    }
    Shape s{g.members, g.gpus, g.level, !map.used(g.level), g.weight * g.members * g.gpus, {}};
    s.room.assign(map.used(g.level) ? map.domain_count(g.level) : n, 0);
    for (size_t i = 0; i < n; ++i) s.room[domain[i]] += free_[i] / g.gpus;
    lost_.resize(std::max(lost_.size(), s.room.size()), 0);
    shapes_.push_back(std::move(s));
  }
  taken_.assign(n, 0);
}

double DomainFragmentationScore::Lost(const Shape& s, int d, int lost) {
  const int room = s.room[d];
  return s.weight * (room / s.members - std::max(0, room - lost) / s.members);
}

double DomainFragmentationScore::ScoreNode(int node, int gpus) const {
  if (node < 0 || static_cast<size_t>(node) >= free_.size()) return 0;
  double loss = 0;
  const int before = free_[node];
  for (const Shape& s : shapes_) {
    const int lost = before / s.gpus - std::max(0, before - gpus) / s.gpus;
    if (lost > 0) loss += Lost(s, domain_[s.level][node], lost);
  }
  return loss;
}

void DomainFragmentationScore::AddSlack(int node, std::span<int> slack) const {
  if (node < 0 || static_cast<size_t>(node) >= free_.size()) return;
  for (size_t i = 0; i < shapes_.size(); ++i) slack[i] += free_[node] % shapes_[i].gpus;
}

double DomainFragmentationScore::LowerBound(int node, int level, std::span<const int> slack, int gpus) const {
  if (node < 0 || static_cast<size_t>(node) >= free_.size()) return 0;
  double bound = 0;
  for (size_t i = 0; i < shapes_.size(); ++i) {
    const Shape& s = shapes_[i];
    if (s.level > level || s.by_node) continue;
    const int beyond = gpus - slack[i];
    if (beyond > 0) bound += Lost(s, domain_[s.level][node], (beyond + s.gpus - 1) / s.gpus);
  }
  return bound;
}

double DomainFragmentationScore::Score(std::span<const NodeTake> takes) const {
  if (shapes_.empty() || takes.empty()) return 0;
  // GPUs taken per node: summed in taken_ (indexed by node), the nodes listed once in per_node_.
  per_node_.clear();
  for (const NodeTake& t : takes) {
    if (t.gpus <= 0 || t.node < 0 || static_cast<size_t>(t.node) >= free_.size()) continue;
    if (taken_[t.node] == 0) per_node_.push_back({t.node, 0});
    taken_[t.node] += t.gpus;
  }
  for (NodeTake& t : per_node_) {
    t.gpus = taken_[t.node];
    taken_[t.node] = 0;
  }
  double loss = 0;
  for (const Shape& s : shapes_) loss += ShapeLoss(s, per_node_);
  return loss;
}

// The loss of shape s for takes of distinct nodes: each domain's room lost summed in lost_ (indexed
// by domain), the domains listed once in touched_.
double DomainFragmentationScore::ShapeLoss(const Shape& s, std::span<const NodeTake> per_node) const {
  const std::vector<int>& domain = domain_[s.level];
  touched_.clear();
  for (const NodeTake& t : per_node) {
    const int before = free_[t.node];
    const int lost = before / s.gpus - std::max(0, before - t.gpus) / s.gpus;
    if (lost <= 0) continue;
    const int d = domain[t.node];
    if (lost_[d] == 0) touched_.push_back(d);
    lost_[d] += lost;
  }
  double loss = 0;
  for (int d : touched_) {
    loss += Lost(s, d, lost_[d]);
    lost_[d] = 0;
  }
  return loss;
}

}  // namespace topofit::groups
