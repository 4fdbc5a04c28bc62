#include "extender/groups/group_preemption.h"

#include <algorithm>
#include <optional>
#include <set>

namespace topofit::groups {
namespace {

// The priority of the victim `h` belongs to, when preemption for a group of `priority` may take it.
std::optional<int32_t> Preemptible(const cluster::Holding& h, int32_t priority, const GroupLookup& lookup) {
  if (h.kind == cluster::HoldingKind::kReserved) return std::nullopt;
  const int32_t victim = lookup.VictimPriority(h);
  if (victim >= priority) return std::nullopt;
  return victim;
}

// Where to cut among the distinct priorities `below` (all under `priority`): see the header.
std::vector<int32_t> Tiers(const std::set<int32_t>& below, int32_t priority) {
  if (below.empty()) return {};
  std::vector<int32_t> cuts;
  for (int32_t p : below) cuts.push_back(p + 1);  // p < priority <= INT32_MAX
  cuts.back() = priority;
  if (cuts.size() <= kMaxPreemptionTiers) return cuts;
  std::vector<int32_t> spread;
  for (size_t i = 1; i <= kMaxPreemptionTiers; ++i) spread.push_back(cuts[i * cuts.size() / kMaxPreemptionTiers - 1]);
  return spread;
}

}  // namespace

PreemptibleGpus::PreemptibleGpus(const cluster::ClusterModel::Reader& reader, const DomainMap& domains,
                                 int32_t priority, const GroupLookup& lookup)
    : nodes_(ReadGroupNodes(reader, domains)), pods_(domains.size()) {
  std::set<int32_t> below;
  for (size_t i = 0; i < domains.size(); ++i) {
    const GroupNode& node = nodes_.nodes[i];
    if (!node.topology || node.free == node.usable) continue;
    const cluster::NodeState* state = reader.Find(domains.name(i));
    if (!state) continue;
    for (const cluster::Holding& h : state->Holdings()) {
      const auto victim = Preemptible(h, priority, lookup);
      if (!victim) continue;
      pods_[i].push_back({*victim, h.gpus & node.usable});
      below.insert(*victim);
    }
  }
  tiers_ = Tiers(below, priority);
}

GroupNodes PreemptibleGpus::IfPreempted(int32_t tier) const {
  GroupNodes out = nodes_;
  for (size_t i = 0; i < pods_.size(); ++i)
    for (const Pod& pod : pods_[i])
      if (pod.priority < tier) out.nodes[i].free = out.nodes[i].free | pod.gpus;
  return out;
}

std::vector<std::string> Preempted(const cluster::ClusterModel::Reader& reader, std::span<const MemberPlan> members,
                                   int32_t priority, const GroupLookup& lookup) {
  std::vector<std::string> pods;
  for (const MemberPlan& m : members) {
    const cluster::NodeState* state = reader.Find(m.node_name);
    if (!state) continue;
    for (const cluster::Holding& h : state->Holdings()) {
      if ((h.gpus & m.gpus).empty()) continue;
      if (!Preemptible(h, priority, lookup)) continue;
      std::string name = lookup.VictimName(h);
      if (std::find(pods.begin(), pods.end(), name) == pods.end()) pods.push_back(std::move(name));
    }
  }
  return pods;
}

}  // namespace topofit::groups
