#pragma once
// GroupMembers: the members of every group (a job of many pods, topofit.io/group) the model has seen,
// pending or bound, by group key ("namespace/group") - what a group waits for before it is planned,
// and the members a re-plan keeps where they are (extender/groups/group_coordinator.h).
//
// Fed by the model: ClusterModel::ApplyPod puts every pod carrying topofit.io/group (pending: node "";
// bound: its node), and takes out a terminated or terminating one (it is leaving; a re-created member
// takes its place); DeletePod takes it out. Filter and prioritize put the pods they see (through
// ApplyPod's pending path or Put), so a group is counted without a watch too. A pending member not put
// again within `ttl` is gone (kube-scheduler gave up on it; deleted ones the watch takes out at once).
// At most `capacity` members in all: past it a new member is not counted (its group waits; a bounded
// answer). A uid put under another group moves there.
// Not an error: Erase of a uid never put. Thread-safe; its lock is a leaf (nothing is locked under it).

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/cluster/clock.h"

namespace topofit::cluster {

struct GroupMember {
  std::string uid;
  std::string name;   // The pod's name.
  std::string node;   // Where it is bound; "" while pending.
  TimePoint seen{};   // When it was last put.
  bool bound() const { return !node.empty(); }
  friend bool operator==(const GroupMember&, const GroupMember&) = default;
};

class GroupMembers {
 public:
  static constexpr size_t kDefaultCapacity = 100000;

  GroupMembers(const Clock* clock, size_t capacity, Duration ttl);

  void Put(const std::string& key, GroupMember member);  // member.seen is set here.
  void Erase(std::string_view uid);
  // The group's members, sorted by pod name; pending ones past their ttl are left out.
  std::vector<GroupMember> Of(std::string_view key) const;
  bool Has(std::string_view uid) const;
  std::vector<std::string> Keys() const;  // Sorted.
  size_t size() const;

 private:
  bool Live(const GroupMember& m, TimePoint now) const { return m.bound() || now - m.seen < ttl_; }

  const Clock* clock_;
  const size_t capacity_;
  const Duration ttl_;
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, GroupMember>, std::less<>> by_group_;  // key -> uid -> member
  std::unordered_map<std::string, std::string> group_of_;                            // uid -> key
};

}  // namespace topofit::cluster
