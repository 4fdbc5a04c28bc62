// GroupCoordinator's view of its groups: the status table (Track, Groups) and Explain.
#include <algorithm>

#include <fmt/format.h>

#include "extender/groups/domain_tree.h"
#include "extender/groups/group_coordinator.h"

namespace topofit::groups {

namespace {

double Seconds(cluster::Duration d) { return std::chrono::duration<double>(d).count(); }

constexpr size_t kMaxDomainsExplained = 50;

}  // namespace

void GroupCoordinator::Track(const std::string& key, const std::optional<GroupSpec>& spec, const GroupVerdict& v) {
  const cluster::TimePoint now = pipeline_.model().clock().Now();
  std::lock_guard lock(status_mu_);
  auto [it, added] = status_.try_emplace(key);
  Tracked& t = it->second;
  if (added) t.first_seen = now;
  t.last_seen = now;
  if (spec) t.spec = spec;
  if (v.planned_now) {
    t.planned_at = now;
    t.domain = v.domain;
  }
  t.reason = v.reason;
  t.preempting = v.preempted;
  if (status_.size() <= kMaxGroups) return;
  auto oldest = std::min_element(status_.begin(), status_.end(), [](const auto& a, const auto& b) {
    return a.second.last_seen < b.second.last_seen;
  });
  status_.erase(oldest);
}

double GroupCoordinator::WaitedSeconds(const std::string& key) const {
  const cluster::TimePoint now = pipeline_.model().clock().Now();
  std::lock_guard lock(status_mu_);
  auto it = status_.find(key);
  return it == status_.end() ? 0 : Seconds(now - it->second.first_seen);
}

std::string GroupCoordinator::LastReason(const std::string& key) const {
  std::lock_guard lock(status_mu_);
  auto it = status_.find(key);
  return it == status_.end() ? std::string() : it->second.reason;
}

std::vector<GroupStatus> GroupCoordinator::Groups() const {
  const cluster::TimePoint now = pipeline_.model().clock().Now();
  std::map<std::string, Tracked, std::less<>> tracked;
  {
    std::lock_guard lock(status_mu_);
    tracked = status_;
  }
  std::vector<GroupStatus> out;
  for (const auto& [key, t] : tracked) {
    GroupStatus s;
    s.key = key;
    s.spec = t.spec;
    for (const cluster::GroupMember& m : pipeline_.model().group_members().Of(key)) {
      ++s.members_seen;
      s.members_bound += m.bound();
    }
    const auto reservation = reservations_.Get(key);
    const int size = t.spec ? t.spec->size : 0;
    if (size > 0 && s.members_bound >= size) {
      s.state = GroupState::kBound;
    } else if (reservation) {
      s.state = GroupState::kPlanned;
    }
    if (s.state != GroupState::kWaiting) s.domain = t.domain;
    if (s.state == GroupState::kWaiting) {
      s.reason = t.reason;
      s.preempting = t.preempting;
    }
    s.notes = refusals_.Notes(key, now);  // Kept while recent, bound or not: why it went where it did.
    const bool placed = t.planned_at && s.state != GroupState::kWaiting;
    s.waiting_seconds = Seconds((placed ? *t.planned_at : now) - t.first_seen);
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<GroupExplanation> GroupCoordinator::Explain(const cluster::PodRequest& pod) const {
  if (!lookup_.IsMember(pod)) return std::nullopt;
  GroupExplanation e;
  const std::string key = lookup_.KeyOf(pod);
  e.status.key = key;
  for (const GroupStatus& s : Groups())
    if (s.key == key) e.status = s;
  auto spec = lookup_.SpecOf(pod, e.status.members_seen);
  if (!spec.ok() || !*spec) {
    e.status.reason = spec.ok() ? "the pod names no group" : spec.error();
    return e;
  }
  e.status.spec = **spec;
  const GroupSpec& g = **spec;
  e.level = lookup_.levels().levels[g.level].name;
  const std::shared_ptr<const DomainMap> map = maps_.Get();
  const GroupNodes nodes = ReadGroupNodes(pipeline_.model(), *map);
  DomainTree tree(nodes, pipeline_.placer(), g.gpus, g.intent, g.size);
  std::vector<int> units = tree.UnitsAt(g.level);
  std::sort(units.begin(), units.end(), [&](int a, int b) { return tree.BestFitLess(a, b); });
  for (int u : units) {
    if (e.domains.size() == kMaxDomainsExplained) break;
    const TreeUnit& unit = tree.unit(u);
    e.domains.push_back(DomainVerdict{unit.name, unit.capacity, unit.free_gpus, unit.capacity >= g.size});
  }
  if (auto r = reservations_.Get(key)) {
    for (const cluster::GroupSlot& s : r->slots) {
      e.plan.push_back(MemberPlan{-1, s.node, s.gpus, 0, true});
      if (s.member_uid == pod.uid) e.slot_node = s.node;
    }
  } else {
    GroupNodes open = nodes;  // What a plan now would use: without the nodes kube-scheduler turned away.
    for (const std::string& n : refusals_.Excluded(key, pipeline_.model().clock().Now()))
      if (auto i = map->Find(n)) open.nodes[*i].free = GpuSet();
    GroupPlan plan = planner_.Plan(open, g);
    e.plan = plan.members;
    e.status.notes.insert(e.status.notes.end(), plan.notes.begin(), plan.notes.end());
    if (!plan.ok && e.status.reason.empty()) e.status.reason = fmt::format("group {}: {}", g.name, plan.reason);
  }
  return e;
}

}  // namespace topofit::groups
