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
    Shape s{g.members, g.gpus, g.level, g.weight * g.members * g.gpus, {}};
    s.room.assign(map.used(g.level) ? map.domain_count(g.level) : n, 0);
    for (size_t i = 0; i < n; ++i) s.room[domain[i]] += free_[i] / g.gpus;
    shapes_.push_back(std::move(s));
  }
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

double DomainFragmentationScore::Score(std::span<const NodeTake> takes) const {
  if (shapes_.empty() || takes.empty()) return 0;
  // GPUs taken per node, nodes in order.
  per_node_.clear();
  for (const NodeTake& t : takes) {
    if (t.node >= 0 && static_cast<size_t>(t.node) < free_.size()) per_node_.push_back(t);
  }
  if (per_node_.size() > 1) {
    std::sort(per_node_.begin(), per_node_.end(), [](const NodeTake& a, const NodeTake& b) { return a.node < b.node; });
  }
  size_t out = 0;
  for (size_t i = 0; i < per_node_.size(); ++i) {
    if (out > 0 && per_node_[out - 1].node == per_node_[i].node) per_node_[out - 1].gpus += per_node_[i].gpus;
    else per_node_[out++] = per_node_[i];
  }
  per_node_.resize(out);
  double loss = 0;
  for (const Shape& s : shapes_) {
    const std::vector<int>& domain = domain_[s.level];
    drop_.clear();  // (domain, room lost)
    for (const NodeTake& t : per_node_) {
      const int before = free_[t.node];
      const int lost = before / s.gpus - std::max(0, before - t.gpus) / s.gpus;
      if (lost > 0) drop_.emplace_back(domain[t.node], lost);
    }
    if (drop_.size() > 1) std::sort(drop_.begin(), drop_.end());
    for (size_t i = 0; i < drop_.size();) {
      const int d = drop_[i].first;
      int lost = 0;
      for (; i < drop_.size() && drop_[i].first == d; ++i) lost += drop_[i].second;
      loss += Lost(s, d, lost);
    }
  }
  return loss;
}

}  // namespace topofit::groups
