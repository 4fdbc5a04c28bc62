#pragma once
// GroupShapeEstimate: the group half of the workload estimate - a running, decaying estimate of the
// shapes of the groups the cluster is asked to place, which DomainFragmentation (domain_fragmentation.h)
// takes its expectation over, as FragmentationGradient takes it over the pods' shapes
// (placement/workload_estimate.h). It learns only from groups as they arrive (serve: a group's first
// plan; the bench: each arrival), never from what is to come.
//
// A group is reduced to its shape: members (GroupSpec::size), GPUs per member and the level it asks
// (index into the DomainLevels the spec was read with; required and preferred alike: a preferred group
// is best served inside its level too). Equal shapes share one entry.
//
// Decay: each observation weighs 2^(1/half_life) times the one before it (half_life in groups; how it
// was chosen: docs/groups.md, "Fragmentation at every level"). At most max_shapes shapes are kept; a
// new shape beyond that replaces the one of least weight. Observing a group key seen among the last
// `dedup` keys does nothing (a group is planned again after an expiry or a restart). A spec asking no
// GPUs, no member or a negative level is not observed (not an error: there is nothing to expect).
//
// Snapshot(): shapes with weights summing to 1, in descending weight; empty until a group is seen -
// and with no shape, DomainFragmentation scores nothing and placement is exactly that of a cluster
// without groups. Thread-safe: Observe takes a mutex and publishes a new snapshot; Snapshot copies a
// shared_ptr.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/decaying_tally.h"
#include "extender/groups/group_spec.h"

namespace topofit::groups {

struct GroupShape {
  int members = 0;
  int gpus = 0;        // Per member.
  int level = 0;       // Index into DomainLevels.
  double weight = 0;   // In a snapshot: share of the estimate, summing to 1.
  friend bool operator==(const GroupShape&, const GroupShape&) = default;
};

struct GroupShapeSnapshot {
  std::vector<GroupShape> shapes;  // Descending weight.
  uint64_t observed = 0;           // Groups observed since start.
};

struct GroupShapeOptions {
  double half_life = 2000;  // Groups.
  size_t max_shapes = 32;
  size_t dedup = 4096;
};

class GroupShapeEstimate {
 public:
  explicit GroupShapeEstimate(GroupShapeOptions options = {});
  // Adds one group; returns whether it was counted.
  bool Observe(const GroupSpec& spec);
  std::shared_ptr<const GroupShapeSnapshot> Snapshot() const;
  // Whether some group was ever counted (its snapshot then has a shape for good); lock-free, for
  // the hot path of pods of no group (domain_loss.h).
  bool any() const { return any_.load(std::memory_order_acquire); }

 private:
  void PublishLocked();

  const GroupShapeOptions options_;
  mutable std::mutex mu_;
  std::vector<GroupShape> entries_;  // Weights unnormalised.
  DecayingUnit unit_;
  uint64_t observed_ = 0;
  RecentKeys recent_;
  std::shared_ptr<const GroupShapeSnapshot> snapshot_;
  std::atomic<bool> any_{false};  // Set after the first counted group's snapshot is published.
};

}  // namespace topofit::groups
