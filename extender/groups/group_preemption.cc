#include "extender/groups/group_preemption.h"

#include <algorithm>
#include <set>

namespace topofit::groups {
namespace {

bool Preemptible(const cluster::Holding& h, int32_t priority) {
  return h.kind != cluster::HoldingKind::kReserved && h.priority < priority;
}

}  // namespace

GroupNodes ReadGroupNodesIfPreempted(const cluster::ClusterModel::Reader& reader, const DomainMap& domains,
                                     int32_t priority) {
  GroupNodes out = ReadGroupNodes(reader, domains);
  for (size_t i = 0; i < domains.size(); ++i) {
    GroupNode& node = out.nodes[i];
    if (!node.topology || node.free == node.usable) continue;
    const cluster::NodeState* state = reader.Find(domains.name(i));
    if (!state) continue;
    for (const cluster::Holding& h : state->Holdings())
      if (Preemptible(h, priority)) node.free = node.free | (h.gpus & node.usable);
  }
  return out;
}

std::vector<int32_t> PreemptionTiers(const cluster::ClusterModel::Reader& reader, int32_t priority) {
  std::set<int32_t> below;
  reader.ForEach([&](const cluster::NodeState& node) {
    if (node.free() == node.usable()) return;
    for (const cluster::Holding& h : node.Holdings())
      if (Preemptible(h, priority)) below.insert(h.priority);
  });
  if (below.empty()) return {};
  std::vector<int32_t> cuts;
  for (int32_t p : below) cuts.push_back(p + 1);  // p < priority <= INT32_MAX
  cuts.back() = priority;
  if (cuts.size() <= kMaxPreemptionTiers) return cuts;
  std::vector<int32_t> spread;
  for (size_t i = 1; i <= kMaxPreemptionTiers; ++i) spread.push_back(cuts[i * cuts.size() / kMaxPreemptionTiers - 1]);
  return spread;
}

std::vector<std::string> Preempted(const cluster::ClusterModel::Reader& reader, std::span<const MemberPlan> members,
                                   int32_t priority) {
  std::vector<std::string> pods;
  for (const MemberPlan& m : members) {
    const cluster::NodeState* state = reader.Find(m.node_name);
    if (!state) continue;
    for (const cluster::Holding& h : state->Holdings()) {
      if (!Preemptible(h, priority) || (h.gpus & m.gpus).empty()) continue;
      if (std::find(pods.begin(), pods.end(), h.pod) == pods.end()) pods.push_back(h.pod);
    }
  }
  return pods;
}

}  // namespace topofit::groups
