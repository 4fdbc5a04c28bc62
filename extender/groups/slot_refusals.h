#pragma once
// SlotRefusals: the slot nodes kube-scheduler turned away for a group's members, so that the group is
// planned again around them at once instead of holding its reservation until the TTL
// (group_coordinator.h, docs/groups.md "A slot kube-scheduler turns away").
//
// SlotRefused(node, candidates, nominated): whether a filter call's candidate nodes say kube-scheduler
//   refused the slot's node. kube-scheduler sends the extender the nodes its own filters passed; it stops
//   looking once it has found kMinFeasibleNodesToFind of them (its minFeasibleNodesToFind,
//   schedule_one.go, v1.36.3) or its percentage of nodes to score, never fewer than that minimum. So a
//   list of fewer than kMinFeasibleNodesToFind nodes is every node that passed: a slot node missing from
//   it was refused (a taint, CPU or memory, a node selector, the node NotReady). A longer list may have
//   been cut before reaching the slot's node, so by itself it proves nothing - unless the pod's
//   nominatedNodeName (`nominated`) is the slot's node: kube-scheduler then evaluates that node alone
//   first (evaluateNominatedNode) and sends it alone when it passes, so a list of any length without it
//   says it did not.
// Record(key, node, member, now): a refusal; the node is left out of the group's plans for `window`.
// MayReplan(key, now): fewer than kMaxReplans refusals of the group within `window`: a re-plan is
//   allowed. This bounds the loop (a member refused wherever it is led re-plans kMaxReplans times,
//   then its group waits for the TTL as before). Why 3: one node turned away (a taint, NotReady, a
//   full node) needs one re-plan; 3 lets two such nodes go within one TTL with one to spare, and a
//   member that no node accepts then costs its group 3 plans (milliseconds each) per TTL - the same
//   bound as GroupCoordinator::kMaxPlanTries puts on one filter call.
// Excluded(key, now): the nodes refused within `window`, for the planner to leave out.
// Notes(key, now): one line per refusal within `window`, for explain and GET /api/v1/groups.
// Old entries are dropped as they age; at most kMaxGroups groups are kept (the oldest refusal goes).
// Not errors: unknown groups (nothing refused). Thread-safe.

#include <cstddef>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster/clock.h"

namespace topofit::groups {

class SlotRefusals {
 public:
  static constexpr size_t kMinFeasibleNodesToFind = 100;  // kube-scheduler's, schedule_one.go.
  static constexpr int kMaxReplans = 3;
  static constexpr size_t kMaxGroups = 10000;

  explicit SlotRefusals(cluster::Duration window) : window_(window) {}

  static bool SlotRefused(std::string_view node, std::span<const std::string_view> candidates,
                          std::string_view nominated = {});

  void Record(const std::string& key, const std::string& node, const std::string& member, cluster::TimePoint now);
  bool MayReplan(std::string_view key, cluster::TimePoint now) const;
  std::vector<std::string> Excluded(std::string_view key, cluster::TimePoint now) const;
  std::vector<std::string> Notes(std::string_view key, cluster::TimePoint now) const;

 private:
  struct Refusal {
    std::string node;
    std::string member;
    cluster::TimePoint at{};
  };
  // The refusals of `key` within the window (empty when none).
  std::vector<Refusal> RecentLocked(std::string_view key, cluster::TimePoint now) const;

  const cluster::Duration window_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<Refusal>, std::less<>> groups_;
};

}  // namespace topofit::groups
