#include "extender/groups/domain_fragmentation.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace topofit::groups {

void DomainFragmentationScore::PreScore(const GroupNodes& nodes, const GroupShapeSnapshot& shapes) {
  if (!nodes.domains) {
    shapes_.clear();
    return;
  }
  const DomainMap& map = *nodes.domains;
  const size_t n = nodes.nodes.size();
  free_.assign(n, 0);
  int max_free = 0;
  for (size_t i = 0; i < n; ++i) {
    const GroupNode& node = nodes.nodes[i];
    if (node.topology) free_[i] = (node.free & node.usable).size();
    max_free = std::max(max_free, free_[i]);
  }
  // The vectors of the last call are reused (assign keeps their capacity): a warm score allocates nothing.
  domain_.resize(map.levels().size());
  std::vector<bool> filled(map.levels().size(), false);
  size_t used = 0;
  for (const GroupShape& g : shapes.shapes) {
    if (g.level < 0 || g.level >= map.levels().size() || g.gpus < 1 || g.members < 1) continue;
    std::vector<int>& domain = domain_[g.level];
    if (!filled[g.level]) {  // A level no node carries: every node a domain of its own.
      domain.resize(n);
      for (size_t i = 0; i < n; ++i) domain[i] = static_cast<int>(map.used(g.level) ? map.id(i, g.level) : i);
      filled[g.level] = true;
    }
    if (used == shapes_.size()) shapes_.emplace_back();
    Shape& s = shapes_[used++];
    s.members = g.members;
    s.gpus = g.gpus;
    s.level = g.level;
    s.by_node = !map.used(g.level);
    s.weight = g.weight * g.members * g.gpus;
    s.room_of_free.resize(max_free + 1);
    for (int f = 0; f <= max_free; ++f) s.room_of_free[f] = f / g.gpus;
    s.room.assign(map.used(g.level) ? map.domain_count(g.level) : n, 0);
    for (size_t i = 0; i < n; ++i) s.room[domain[i]] += s.room_of_free[free_[i]];
    s.spare.clear();
    if (s.members > 1) {
      s.spare.resize(s.room.size());
      for (size_t d = 0; d < s.room.size(); ++d) s.spare[d] = s.room[d] % s.members;
    }
    lost_.resize(std::max(lost_.size(), s.room.size()), 0);
  }
  shapes_.resize(used);
  taken_.assign(n, 0);
  max_free_ = max_free;
  class_.clear();
  classes_ = 0;
}

void DomainFragmentationScore::ClassifyNodes() {
  const size_t n = free_.size();
  class_.assign(n, 0);
  classes_ = n ? 1 : 0;
  std::vector<bool> seen(domain_.size(), false);
  std::unordered_map<uint64_t, int> ids;
  std::vector<int> nodes_in;
  for (const Shape& s : shapes_) {
    if (s.by_node || seen[s.level]) continue;
    seen[s.level] = true;
    const std::vector<int>& domain = domain_[s.level];
    nodes_in.assign(s.room.size(), 0);
    bool shared = false;
    for (size_t i = 0; i < n && !shared; ++i) shared = ++nodes_in[domain[i]] > 1;
    if (!shared) continue;
    // Refine: the pair (class so far, domain here) becomes the class.
    ids.clear();
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = (uint64_t(uint32_t(class_[i])) << 32) | uint32_t(domain[i]);
      class_[i] = ids.try_emplace(key, static_cast<int>(ids.size())).first->second;
    }
    classes_ = static_cast<int>(ids.size());
  }
}

void DomainFragmentationScore::ScoreNodes(std::span<const int> nodes, int gpus, std::span<double> out) const {
  const size_t width = static_cast<size_t>(max_free_) + 1;
  const bool memo = !class_.empty() && static_cast<size_t>(classes_) * width <= 4 * nodes.size();
  std::vector<double> known(memo ? classes_ * width : 0, -1.0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int node = nodes[i];
    if (node < 0 || static_cast<size_t>(node) >= free_.size()) {
      out[i] = 0;
    } else if (!memo) {
      out[i] = ScoreNode(node, gpus);
    } else {
      double& k = known[class_[node] * width + free_[node]];
      if (k < 0) k = ScoreNode(node, gpus);
      out[i] = k;
    }
  }
}

void DomainFragmentationScore::SetFree(int node, int free) {
  if (node < 0 || static_cast<size_t>(node) >= free_.size() || free == free_[node]) return;
  const int before = free_[node];
  free_[node] = free;
  max_free_ = std::max(max_free_, free);
  for (Shape& s : shapes_) {
    const int lost = RoomLost(s, before, before - free);  // Negative when the node gained GPUs.
    if (lost == 0) continue;
    const int d = domain_[s.level][node];
    s.room[d] -= lost;
    if (!s.spare.empty()) s.spare[d] = s.room[d] % s.members;
  }
}

double DomainFragmentationScore::Lost(const Shape& s, int d, int lost) {
  // Whole groups lost: floor(room / m) - floor(max(0, room - lost) / m), which with room = q m + x
  // (x = spare) is 0 while lost <= x, else ceil((lost - x) / m), at most q.
  const int room = s.room[d];
  if (s.members == 1) return s.weight * std::min(room, lost);
  const int spare = s.spare[d];
  if (lost <= spare) return 0;
  return s.weight * std::min(room / s.members, (lost - spare + s.members - 1) / s.members);
}

int DomainFragmentationScore::RoomLost(const Shape& s, int before, int gpus) {
  const int last = static_cast<int>(s.room_of_free.size()) - 1;
  const int after = std::max(0, before - gpus);
  auto room = [&](int f) { return f <= last ? s.room_of_free[f] : f / s.gpus; };
  return room(before) - room(after);
}

double DomainFragmentationScore::ScoreNode(int node, int gpus) const {
  if (node < 0 || static_cast<size_t>(node) >= free_.size()) return 0;
  double loss = 0;
  const int before = free_[node];
  for (const Shape& s : shapes_) {
    const int lost = RoomLost(s, before, gpus);
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
    const int lost = RoomLost(s, free_[t.node], t.gpus);
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
