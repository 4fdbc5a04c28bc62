#pragma once
// Ledger: which of this node's devices each container holds, as far as `topofit node` knows.
//
// Entries come from two sources. Record() adds one after each successful Allocate the front plugin
// forwards (kubelet's own IDs, so the devices are right; the holder is the matcher's best identity,
// or unknown). ReplaceWithTruth() sets the ledger to kubelet's PodResources answer, which names every
// holder; entries Recorded after the List was sent are kept, because that List cannot know them.
// Retain() drops the entries of pods that are gone or terminal, as kubelet frees them.
// MarkEnded() records a pod kubelet has finished - ended or rejected at admission - before its final
// phase reached the pod cache (the reconciler tells, reconciler.h: EndedPods): it holds nothing and
// kubelet never admits it again, so the matcher no longer takes it for a pending pod. Replacing the
// entries with kubelet's truth keeps these marks; Retain() forgets those of pods no longer live.
//
// A device is held by at most one pod at a time; within a pod, an app container may hold a device
// its regular init container held (kubelet's reuse), so Conflicts() is asked per pod. The ledger is
// a plain value: not thread-safe; the owner locks.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extender/node/plugin/plan.h"

namespace topofit::node {

struct LedgerEntry {
  std::string pod_uid;  // Empty: a container not identified (a foreign pod, or an unmatched set).
  std::string container;
  DeviceList devices;   // Sorted.
  uint64_t seq = 0;     // Record() order; 0 for entries from kubelet's truth.
  bool confirmed = false;  // From PodResources.
  friend bool operator==(const LedgerEntry&, const LedgerEntry&) = default;
};

class Ledger {
 public:
  // Adds (or, same pod and container, replaces) an entry; returns its sequence number.
  uint64_t Record(std::string pod_uid, std::string container, DeviceList devices);
  // Kubelet's truth: `truth` (confirmed entries, any order) replaces everything recorded up to
  // sequence `sent_at` (the seq() read just before the List was sent).
  void ReplaceWithTruth(std::vector<LedgerEntry> truth, uint64_t sent_at);
  // Drops the entries of identified pods not in `live` (uids of pods neither gone nor terminal).
  void Retain(const std::set<std::string>& live);
  void MarkEnded(const std::string& pod_uid);

  // Whether (pod, container) already got its devices.
  bool Allocated(std::string_view pod_uid, std::string_view container) const;
  // Whether any of `devices` is held by a container of a pod other than `pod_uid` (or unidentified).
  bool Conflicts(const DeviceList& devices, std::string_view pod_uid) const;
  std::set<std::string> HeldDevices() const;
  bool Ended(std::string_view pod_uid) const;
  const std::vector<LedgerEntry>& entries() const { return entries_; }
  uint64_t seq() const { return seq_; }

 private:
  std::vector<LedgerEntry> entries_;
  std::set<std::string, std::less<>> ended_;
  uint64_t seq_ = 0;
};

}  // namespace topofit::node
