#pragma once
// Metrics: the extender's Prometheus counters and histograms, and the text exposition of them plus
// the model's views (free GPUs and free NVLink sets by shape, per node and in total, and where each
// node's topology came from), the GPU models that pods bound to them will be short of, and the state
// of the API watches.
//
// Request observation is lock-free (atomics): it runs on every verb. Decision counters take a small
// mutex (few distinct labels). Render() is for GET /metrics and reads the model through its views.
// Thread-safe.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "base/prometheus.h"
#include "extender/cluster/cluster_model.h"
#include "extender/placement/product_shortfall.h"

namespace topofit::server {

// kPrioritizePodsWithoutGpus: the prioritize verb of the second extender entry, the one without
// managedResources (extender_verbs.h).
enum class Verb : uint8_t { kFilter, kPrioritize, kBind, kPreempt, kPrioritizePodsWithoutGpus };
inline constexpr int kVerbCount = 5;
// "filter", "prioritize", "bind", "preempt", "prioritize-pods-without-gpus": the verb's path under
// the URL prefix and its label in the metrics.
std::string_view ToString(Verb verb);

class Metrics {
 public:
  // Upper bounds in seconds; sub-millisecond resolution because that is where the verbs live. The
  // top buckets reach kube-scheduler's extender httpTimeout (5s in manifests/base/scheduler-config.yaml)
  // and half of it, so that a p99 near the timeout is visible instead of capped at the last bucket.
  static constexpr std::array<double, 17> kBuckets = {0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0025,
                                                      0.005,  0.01,    0.025,  0.05,    0.1,   0.25,
                                                      0.5,    1.0,     2.5,    5.0,     10.0};

  // `error`: a malformed request or an Error reply.
  void ObserveRequest(Verb verb, double seconds, bool error);
  // outcome, e.g. filter: passed/failed/unresolvable (per node), bind: bound/error.
  void CountDecision(Verb verb, std::string_view outcome, uint64_t n = 1);
  // Live mode: whether the API watch of `kind` ("nodes", "pods") is connected, fed by the live
  // cluster (LiveOptions::on_watch_state). Both kinds always render; one never set reads 0, which is
  // also the truth without a watch (--snapshot, the demo cluster).
  void SetWatchConnected(std::string_view kind, bool connected);
  // Live mode: a pod turned away for GPUs was requeued once topofit saw them freed (capacity_waits.h).
  void CountRequeue() { requeued_.fetch_add(1, std::memory_order_relaxed); }
  // Groups (extender/groups/group_coordinator.h): a group was planned and reserved `seconds` after its
  // first member was seen; and where Render reads how many groups are in each state.
  static constexpr std::array<double, 12> kGroupBuckets = {0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600};
  void ObserveGroupPlaced(double seconds) { group_placed_.Observe(seconds); }
  struct GroupCounts {
    int waiting = 0, planned = 0, bound = 0;
    int preempting = 0;  // Of the waiting: led to where kube-scheduler's preemption would make room.
    // The longest a waiting group has waited since its first member was seen (GroupStatus::waiting_seconds),
    // among those with fewer than min-count members (waiting for its controller) and those with them
    // all (waiting for room: a large job starving shows here long before it is placed); 0: none waits.
    double longest_wait_for_members = 0, longest_wait_for_room = 0;
  };
  void SetGroupCounts(std::function<GroupCounts()> counts);

  // shortfall: the model-bound demand against the free GPUs (QueryApi::Shortfall); null renders
  // no set and a shortfall of 0.
  std::string Render(const cluster::ClusterModel& model, const placement::ProductShortfall* shortfall = nullptr) const;

 private:
  // Render's families, in its order: the verbs' requests, errors and latency; then the decisions,
  // the API watches and the requeued pods.
  void AppendRequests(std::string& out) const;
  void AppendDecisionsAndWatches(std::string& out) const;
  void AppendGroups(std::string& out) const;

  struct VerbStats {
    Histogram latency{kBuckets};
    std::atomic<uint64_t> errors{0};
  };
  std::array<VerbStats, kVerbCount> verbs_;
  mutable std::mutex mu_;
  std::map<std::pair<int, std::string>, uint64_t, std::less<>> decisions_;
  std::map<std::string, bool, std::less<>> watch_connected_{{"nodes", false}, {"pods", false}};
  std::atomic<uint64_t> requeued_{0};
  Histogram group_placed_{kGroupBuckets};
  std::function<GroupCounts()> group_counts_;  // Guarded by mu_.
};

}  // namespace topofit::server
