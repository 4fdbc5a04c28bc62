#include "extender/groups/slot_refusals.h"

#include <algorithm>

#include <fmt/format.h>

namespace topofit::groups {

bool SlotRefusals::SlotRefused(std::string_view node, std::span<const std::string_view> candidates,
                               std::string_view nominated) {
  if (node.empty() || (candidates.size() >= kMinFeasibleNodesToFind && nominated != node)) return false;
  return std::find(candidates.begin(), candidates.end(), node) == candidates.end();
}

std::vector<SlotRefusals::Refusal> SlotRefusals::RecentLocked(std::string_view key, cluster::TimePoint now) const {
  auto it = groups_.find(key);
  if (it == groups_.end()) return {};
  std::vector<Refusal> out;
  for (const Refusal& r : it->second)
    if (now - r.at < window_) out.push_back(r);
  return out;
}

void SlotRefusals::Record(const std::string& key, const std::string& node, const std::string& member,
                          cluster::TimePoint now) {
  std::lock_guard lock(mu_);
  std::vector<Refusal> kept = RecentLocked(key, now);
  kept.push_back(Refusal{node, member, now});
  groups_.insert_or_assign(key, std::move(kept));
  if (groups_.size() <= kMaxGroups) return;
  auto oldest = std::min_element(groups_.begin(), groups_.end(), [](const auto& a, const auto& b) {
    return a.second.back().at < b.second.back().at;
  });
  groups_.erase(oldest);
}

bool SlotRefusals::MayReplan(std::string_view key, cluster::TimePoint now) const {
  std::lock_guard lock(mu_);
  return RecentLocked(key, now).size() < static_cast<size_t>(kMaxReplans);
}

std::vector<std::string> SlotRefusals::Excluded(std::string_view key, cluster::TimePoint now) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const Refusal& r : RecentLocked(key, now))
    if (std::find(out.begin(), out.end(), r.node) == out.end()) out.push_back(r.node);
  return out;
}

std::vector<std::string> SlotRefusals::Notes(std::string_view key, cluster::TimePoint now) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  const double window = std::chrono::duration<double>(window_).count();
  for (const Refusal& r : RecentLocked(key, now)) {
    const double ago = std::chrono::duration<double>(now - r.at).count();
    out.push_back(fmt::format("kube-scheduler turned away node {} for {}'s slot {:.0f} s ago: the group was planned "
                              "again without it (left out for {:.0f} s)", r.node, r.member, ago, window));
  }
  return out;
}

}  // namespace topofit::groups
