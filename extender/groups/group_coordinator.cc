#include "extender/groups/group_coordinator.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "extender/groups/group_preemption.h"

namespace topofit::groups {

std::string_view ToString(GroupState state) {
  switch (state) {
    case GroupState::kWaiting: return "waiting";
    case GroupState::kPlanned: return "planned";
    case GroupState::kBound: return "bound";
  }
  return "?";
}

namespace {

// "4 pods", "1 PodGroup and 1 pod": the victims Preempted names (a PodGroup's as "PodGroup ns/name").
std::string Victims(const std::vector<std::string>& preempted) {
  const auto groups = std::count_if(preempted.begin(), preempted.end(),
                                    [](const std::string& v) { return v.starts_with("PodGroup "); });
  const auto pods = static_cast<std::ptrdiff_t>(preempted.size()) - groups;
  auto counted = [](std::ptrdiff_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  if (groups == 0) return counted(pods, "pod");
  if (pods == 0) return counted(groups, "PodGroup");
  return counted(groups, "PodGroup") + " and " + counted(pods, "pod");
}

// "group train-7: 6 of 8 pods created", naming the min-count when it is less than the size.
std::string Created(const GroupSpec& spec, size_t seen) {
  if (spec.min_count == spec.size) return fmt::format("group {}: {} of {} pods created", spec.name, seen, spec.size);
  return fmt::format("group {}: {} of {} pods created (it starts with {})", spec.name, seen, spec.size,
                     spec.min_count);
}

// "block s1/b2": the deepest domain holding every node of `names`; "node n1" when they are one node,
// "the cluster" when no level holds them all.
std::string DomainOfNodes(const DomainMap& map, const std::vector<std::string>& names) {
  std::vector<size_t> nodes;
  for (const std::string& n : names)
    if (auto i = map.Find(n)) nodes.push_back(*i);
  if (nodes.empty()) return "the cluster";
  if (std::all_of(nodes.begin(), nodes.end(), [&](size_t i) { return i == nodes[0]; }))
    return "node " + map.name(nodes[0]);
  for (int l = map.levels().size() - 1; l >= 0; --l) {
    if (!map.used(l)) continue;
    const uint32_t id = map.id(nodes[0], l);
    if (std::all_of(nodes.begin(), nodes.end(), [&](size_t i) { return map.id(i, l) == id; }))
      return map.levels().levels[l].name + " " + map.domain_name(l, id);
  }
  return "the cluster";
}

// Zeroes the free GPUs of every node outside the deepest domain - at `level` or broader - that holds
// every fixed node; false when there is none (nothing is changed).
bool KeepDomainOf(const DomainMap& map, const std::vector<std::string>& fixed_nodes, int level, GroupNodes& nodes) {
  std::vector<size_t> fixed;
  for (const std::string& n : fixed_nodes)
    if (auto i = map.Find(n)) fixed.push_back(*i);
  if (fixed.empty()) return false;
  for (int l = std::min(level, map.levels().size() - 1); l >= 0; --l) {
    const uint32_t id = map.id(fixed[0], l);
    if (!std::all_of(fixed.begin(), fixed.end(), [&](size_t i) { return map.id(i, l) == id; })) continue;
    for (size_t j = 0; j < nodes.nodes.size(); ++j)
      if (map.id(j, l) != id) nodes.nodes[j].free = GpuSet();
    return true;
  }
  return false;
}

// "; left out: node r1-n2 (kube-scheduler turned it away for a member's slot)", or "" when none is.
std::string LeftOut(const std::vector<std::string>& excluded) {
  if (excluded.empty()) return "";
  return fmt::format("; left out: node{} {} (kube-scheduler turned {} away for a member's slot)",
                     excluded.size() == 1 ? "" : "s", fmt::join(excluded, ", "), excluded.size() == 1 ? "it" : "them");
}

// Why a member's slot node is not among the `candidates` kube-scheduler sent (it is not).
std::string NotSent(std::string_view group, const std::string& node, std::span<const std::string_view> candidates,
                    std::string_view nominated) {
  // Another member's re-plan gave it a node refused too.
  if (SlotRefusals::SlotRefused(node, candidates, nominated)) {
    return fmt::format("group {}: this member's GPUs are reserved on node {}, which kube-scheduler turned away: the "
                       "group is planned again without it on this member's next try", group, node);
  }
  return fmt::format("group {}: this member's GPUs are reserved on node {}, which kube-scheduler did not send among "
                     "its {} nodes (with {} or more it may have stopped looking before that node): the reservation "
                     "is kept until it expires, and the member is nominated to it", group, node, candidates.size(),
                     SlotRefusals::kMinFeasibleNodesToFind);
}

// Whether a member's nominatedNodeName should change (to `slot`, "" clearing it): its slot's node was
// not `sent` among the candidates (kube-scheduler's search may have stopped before it), or it is held
// with a nomination. A slot node that was sent is left alone: the member binds there in this cycle,
// and a write racing the bind would leave the field on a bound pod.
bool Nominate(const std::string& nominated, const std::string& slot, bool sent) {
  if (slot.empty()) return !nominated.empty();
  return nominated != slot && !sent;
}

}  // namespace

GroupCoordinator::GroupCoordinator(placement::Pipeline& pipeline, const GroupLookup& lookup, cluster::Duration ttl)
    : pipeline_(pipeline),
      lookup_(lookup),
      maps_(pipeline.model(), lookup.levels()),
      domain_loss_(maps_, lookup, expected_),
      planner_(pipeline.placer(), &expected_),
      reservations_(pipeline.model(), ttl),
      refusals_(ttl) {}

GroupVerdict GroupCoordinator::Filter(const cluster::PodRequest& pod,
                                      std::optional<std::span<const std::string_view>> candidates) {
  GroupVerdict v;
  if (!lookup_.IsMember(pod)) return v;
  v.member = true;
  v.key = lookup_.KeyOf(pod);
  cluster::GroupMembers& members = pipeline_.model().group_members();
  if (!v.key.empty() && !pod.uid.empty()) members.Put(v.key, cluster::GroupMember{pod.uid, pod.name, ""});
  auto spec = lookup_.SpecOf(pod, static_cast<int>(members.Of(v.key).size()));
  if (!spec.ok() || !*spec) {
    v.reason = fmt::format("group {}: {}", pod.group.empty() ? "(unnamed)" : pod.group,
                           spec.ok() ? std::string("the pod names no group") : spec.error());
    if (!v.key.empty()) Track(v.key, std::nullopt, v);
    return v;
  }
  if (auto slot = SlotFor(v.key, pod)) {
    if (candidates && DomainTrial(**spec, slot->node, *candidates).empty() &&
        SlotRefusals::SlotRefused(slot->node, *candidates, pod.nominated_node)) {
      std::lock_guard lock(plan_mu_);
      ReplanRefused(**spec, pod, *slot, v);
    } else {
      v.node = slot->node;
      v.gpus = slot->gpus;
    }
  } else {
    std::lock_guard lock(plan_mu_);
    if (auto again = SlotFor(v.key, pod)) {  // Another member planned the group meanwhile.
      v.node = again->node;
      v.gpus = again->gpus;
    } else {
      PlanWaiting(**spec, pod, LastReason(v.key), v);
    }
  }
  if (candidates) {
    const bool sent = std::find(candidates->begin(), candidates->end(), v.node) != candidates->end();
    const std::string trial = v.node.empty() || sent ? "" : DomainTrial(**spec, v.node, *candidates);
    if (!trial.empty()) {  // Not a refusal, and no nomination: the next domain tried is the slot's.
      if (v.reason.empty()) v.reason = fmt::format("group {}: {}", pod.group, trial);
    } else {
      if (!v.node.empty() && !sent && v.reason.empty()) {
        v.reason = NotSent(pod.group, v.node, *candidates, pod.nominated_node);
      }
      v.nominate = v.preempted.empty() && Nominate(pod.nominated_node, v.node, sent);
    }
  }
  Track(v.key, **spec, v);
  return v;
}

std::string GroupCoordinator::DomainTrial(const GroupSpec& spec, const std::string& slot_node,
                                          std::span<const std::string_view> candidates) const {
  const std::shared_ptr<const DomainMap> map = maps_.Get();
  if (candidates.empty() || spec.level < 0 || spec.level >= map->levels().size() || !map->used(spec.level)) return "";
  const std::optional<size_t> slot = map->Find(slot_node);
  if (!slot) return "";
  std::optional<uint32_t> tried;
  for (std::string_view c : candidates) {
    const std::optional<size_t> n = map->Find(c);
    if (!n) return "";
    const uint32_t d = map->id(*n, spec.level);
    if (tried && *tried != d) return "";
    tried = d;
  }
  const uint32_t mine = map->id(*slot, spec.level);
  if (*tried == mine) return "";
  const std::string& level = map->levels().levels[spec.level].name;
  return fmt::format("kube-scheduler is trying {} {} alone (topology-aware workload scheduling); this group's "
                     "slots are in {} {}", level, map->domain_name(spec.level, *tried), level,
                     map->domain_name(spec.level, mine));
}

void GroupCoordinator::PlanWaiting(const GroupSpec& spec, const cluster::PodRequest& pod, const std::string& before,
                                   GroupVerdict& v) {
  PlanGroup(spec, pod, v);
  const std::vector<cluster::GroupMember> seen = pipeline_.model().group_members().Of(v.key);
  const bool complete = static_cast<int>(seen.size()) >= spec.min_count;
  if (!v.planned_now && complete && !v.reason.empty() && v.reason != before) {
    for (const cluster::GroupMember& m : seen)
      if (!m.bound() && m.uid != pod.uid) v.requeue.push_back(m);
  }
}

void GroupCoordinator::ReplanRefused(const GroupSpec& spec, const cluster::PodRequest& pod,
                                     const cluster::GroupSlot& slot, GroupVerdict& v) {
  if (auto again = SlotFor(v.key, pod); again && again->node != slot.node) {  // Another member re-planned.
    v.node = again->node;
    v.gpus = again->gpus;
    return;
  }
  const cluster::TimePoint now = pipeline_.model().clock().Now();
  if (!refusals_.MayReplan(v.key, now)) {
    v.node = slot.node;
    v.gpus = slot.gpus;
    v.reason = fmt::format("group {}: this member's GPUs are reserved on node {}, which kube-scheduler turned away; "
                           "the group was planned again {} times in {:.0f} s already, so it keeps this plan until "
                           "the reservation expires", spec.name, slot.node, SlotRefusals::kMaxReplans,
                           std::chrono::duration<double>(reservations_.ttl()).count());
    return;
  }
  refusals_.Record(v.key, slot.node, pod.name, now);
  reservations_.DropUnhanded(v.key);
  v.replanned = slot.node;
  PlanWaiting(spec, pod, LastReason(v.key), v);
}

std::optional<cluster::GroupSlot> GroupCoordinator::SlotFor(const std::string& key, const cluster::PodRequest& pod) {
  const cluster::GroupMembers& members = pipeline_.model().group_members();
  return reservations_.Assign(key, pod.uid, [&members](std::string_view uid) { return members.Has(uid); });
}

std::optional<cluster::GroupSlot> GroupCoordinator::SlotOf(const cluster::PodRequest& pod) const {
  if (!lookup_.IsMember(pod)) return std::nullopt;
  return reservations_.SlotOf(lookup_.KeyOf(pod), pod.uid);
}

void GroupCoordinator::PlanGroup(const GroupSpec& spec, const cluster::PodRequest& pod, GroupVerdict& v) {
  const cluster::GroupMembers& members = pipeline_.model().group_members();
  for (int attempt = 0; attempt < kMaxPlanTries; ++attempt) {
    const std::vector<cluster::GroupMember> seen = members.Of(v.key);
    std::map<std::string, std::string> fixed;  // uid -> node: bound, or its bind took a slot.
    for (const cluster::GroupMember& m : seen)
      if (m.bound()) fixed.emplace(m.uid, m.node);
    if (auto r = reservations_.Get(v.key)) {
      if (!r->all_handed()) {
        v.reason = fmt::format("group {}: all {} slots of its plan are taken by other members", spec.name,
                               r->slots.size());
        return;
      }
      for (const cluster::GroupSlot& s : r->slots)
        if (members.Has(s.member_uid)) fixed.emplace(s.member_uid, s.node);
    }
    if (static_cast<int>(seen.size()) < spec.min_count) {
      v.reason = Created(spec, seen.size());
      return;
    }
    if (static_cast<int>(fixed.size()) >= spec.size) {
      v.reason = fmt::format("group {}: all {} members are placed; this pod is one more", spec.name, spec.size);
      return;
    }
    std::vector<std::string> fixed_nodes;
    for (const auto& [uid, node] : fixed) fixed_nodes.push_back(node);
    std::string domain;
    GroupPlan plan;
    if (Unplanned* unplanned = PlanOrRecall(v.key, spec, fixed_nodes, plan, domain)) {
      v.reason = unplanned->reason;
      std::vector<std::string> waiting;
      for (const cluster::GroupMember& m : seen)
        if (!m.bound() && !fixed.count(m.uid)) waiting.push_back(m.uid);
      PlanIfPreempted(*unplanned, pod, std::move(waiting), v);
      return;
    }
    std::vector<cluster::GroupReservations::SlotRequest> slots;
    for (const MemberPlan& m : plan.members) slots.push_back({m.node_name, m.gpus});
    reservations_.Release(v.key);  // A record whose slots were all handed over: they are fixed above.
    if (!reservations_.Reserve(v.key, slots).ok()) continue;  // A bind took some of its GPUs: plan again.
    auto slot = SlotFor(v.key, pod);
    if (!slot) continue;
    v.node = slot->node;
    v.gpus = slot->gpus;
    v.domain = domain;
    v.planned_now = true;
    v.waited_seconds = WaitedSeconds(v.key);
    for (const cluster::GroupMember& m : seen)
      if (!m.bound() && m.uid != pod.uid && !fixed.count(m.uid)) v.requeue.push_back(m);
    return;
  }
  v.reason = fmt::format("group {}: its plan's GPUs were taken while reserving it; it is planned again on the "
                         "next try", spec.name);
}

GroupPlan GroupCoordinator::PlanRest(const GroupSpec& spec, const std::vector<std::string>& fixed_nodes,
                                     const std::vector<std::string>& excluded, std::string* domain,
                                     const GroupNodes* nodes) const {
  const std::shared_ptr<const DomainMap> shared_map = nodes ? nullptr : maps_.Get();
  const DomainMap& map = nodes ? *nodes->domains : *shared_map;
  GroupNodes all = nodes ? *nodes : ReadGroupNodes(pipeline_.model(), map);
  for (const std::string& n : excluded)
    if (auto i = map.Find(n)) all.nodes[*i].free = GpuSet();
  GroupSpec rest = spec;
  rest.size = spec.size - static_cast<int>(fixed_nodes.size());
  rest.min_count = std::clamp(spec.min_count - static_cast<int>(fixed_nodes.size()), 1, rest.size);
  GroupNodes near = all;
  GroupPlan plan;
  if (!KeepDomainOf(map, fixed_nodes, spec.level, near)) {
    plan = planner_.Plan(all, rest);
  } else {
    plan = planner_.Plan(near, rest);
    if (!plan.ok && spec.policy == LevelPolicy::kPreferred) plan = planner_.Plan(all, rest);
  }
  std::vector<std::string> every = fixed_nodes;
  for (const MemberPlan& m : plan.members) every.push_back(m.node_name);
  *domain = DomainOfNodes(map, every);
  return plan;
}

GroupCoordinator::Unplanned* GroupCoordinator::PlanOrRecall(const std::string& key, const GroupSpec& spec,
                                                            const std::vector<std::string>& fixed_nodes,
                                                            GroupPlan& plan, std::string& domain) {
  const cluster::ClusterModel& model = pipeline_.model();
  Unplanned now;
  now.made = model.clock().Now();
  now.gpu_generation = model.gpu_generation();
  now.node_generation = model.node_generation();
  now.spec = spec;
  now.fixed_nodes = fixed_nodes;
  now.excluded = refusals_.Excluded(key, model.clock().Now());
  if (const auto it = unplanned_.find(key); it != unplanned_.end()) {
    const Unplanned& u = it->second;
    if (now.made - u.made < kRecallFor && u.gpu_generation == now.gpu_generation &&
        u.node_generation == now.node_generation && u.spec == now.spec && u.fixed_nodes == now.fixed_nodes &&
        u.excluded == now.excluded)
      return &it->second;
  }
  plan = PlanRest(spec, fixed_nodes, now.excluded, &domain);
  if (plan.ok) {
    unplanned_.erase(key);
    return nullptr;
  }
  now.reason = fmt::format("group {}: {}{}", spec.name, plan.reason, LeftOut(now.excluded));
  if (unplanned_.size() >= kMaxGroups) unplanned_.clear();
  return &(unplanned_[key] = std::move(now));
}

void GroupCoordinator::PlanIfPreempted(Unplanned& u, const cluster::PodRequest& pod, std::vector<std::string> waiting,
                                       GroupVerdict& v) {
  if (pod.preempt_never) return;
  if (!u.preemption_planned) {
    u.preemption_planned = true;
    const std::shared_ptr<const DomainMap> map = maps_.Get();
    const PreemptibleGpus preemptible(pipeline_.model().Read(), *map, u.spec.priority, lookup_);
    for (int32_t tier : preemptible.tiers()) {
      const GroupNodes nodes = preemptible.IfPreempted(tier);
      u.if_preempted = PlanRest(u.spec, u.fixed_nodes, u.excluded, &u.if_preempted_domain, &nodes);
      if (!u.if_preempted.ok) continue;
      u.preempted = Preempted(pipeline_.model().Read(), u.if_preempted.members, tier, lookup_);
      break;
    }
  }
  std::sort(waiting.begin(), waiting.end());
  const size_t rank = std::find(waiting.begin(), waiting.end(), pod.uid) - waiting.begin();
  if (!u.if_preempted.ok || u.preempted.empty() || rank >= u.if_preempted.members.size()) return;
  v.node = u.if_preempted.members[rank].node_name;
  v.gpus = u.if_preempted.members[rank].gpus;
  v.preempted = u.preempted;
  const size_t shown = std::min<size_t>(u.preempted.size(), 3);
  v.reason += fmt::format("; {} can take them if kube-scheduler preempts {} of priority below {} ({}{}): "
                          "each member passes its node there alone, for kube-scheduler's workload-aware preemption",
                          u.if_preempted_domain, Victims(u.preempted), u.spec.priority, fmt::join(u.preempted.begin(), u.preempted.begin() + shown, ", "),
                          u.preempted.size() > shown ? fmt::format(" and {} more", u.preempted.size() - shown) : "");
}

Result<GpuSet> GroupCoordinator::Bind(const cluster::PodRequest& pod, std::string_view node) {
  return reservations_.HandOver(lookup_.KeyOf(pod), pod, node);
}

void GroupCoordinator::Bound(const cluster::PodRequest& pod, std::string_view node) {
  const std::string key = lookup_.KeyOf(pod);
  if (!key.empty()) pipeline_.model().group_members().Put(key, cluster::GroupMember{pod.uid, pod.name, std::string(node)});
}

}  // namespace topofit::groups
