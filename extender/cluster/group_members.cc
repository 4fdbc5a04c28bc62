#include "extender/cluster/group_members.h"

#include <algorithm>

namespace topofit::cluster {

GroupMembers::GroupMembers(const Clock* clock, size_t capacity, Duration ttl)
    : clock_(clock), capacity_(capacity), ttl_(ttl) {}

void GroupMembers::Put(const std::string& key, GroupMember member) {
  if (key.empty() || member.uid.empty()) return;
  member.seen = clock_->Now();
  std::lock_guard lock(mu_);
  auto old = group_of_.find(member.uid);
  if (old != group_of_.end() && old->second != key) {
    auto g = by_group_.find(old->second);
    if (g != by_group_.end()) {
      g->second.erase(member.uid);
      if (g->second.empty()) by_group_.erase(g);
    }
    group_of_.erase(old);
    old = group_of_.end();
  }
  if (old == group_of_.end()) {
    if (group_of_.size() >= capacity_) return;
    group_of_.emplace(member.uid, key);
  }
  std::string uid = member.uid;
  by_group_[key].insert_or_assign(std::move(uid), std::move(member));
}

void GroupMembers::Erase(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = group_of_.find(std::string(uid));
  if (it == group_of_.end()) return;
  auto g = by_group_.find(it->second);
  if (g != by_group_.end()) {
    g->second.erase(it->first);
    if (g->second.empty()) by_group_.erase(g);
  }
  group_of_.erase(it);
}

std::vector<GroupMember> GroupMembers::Of(std::string_view key) const {
  const TimePoint now = clock_->Now();
  std::vector<GroupMember> out;
  std::lock_guard lock(mu_);
  auto g = by_group_.find(key);
  if (g == by_group_.end()) return out;
  for (const auto& [uid, m] : g->second)
    if (Live(m, now)) out.push_back(m);
  std::sort(out.begin(), out.end(), [](const GroupMember& a, const GroupMember& b) { return a.name < b.name; });
  return out;
}

bool GroupMembers::Has(std::string_view uid) const {
  std::lock_guard lock(mu_);
  return group_of_.count(std::string(uid)) > 0;
}

std::vector<std::string> GroupMembers::Keys() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, members] : by_group_) out.push_back(key);
  return out;
}

size_t GroupMembers::size() const {
  std::lock_guard lock(mu_);
  return group_of_.size();
}

}  // namespace topofit::cluster
