#pragma once
// FrontPlugin: the v1beta1.DevicePlugin server kubelet talks to (registered as nvidia.com/gpu).
//   GetDevicePluginOptions  get_preferred_allocation_available true; pre_start_required as the backend's.
//   ListAndWatch            relays the backend's device list, again on every change. While the
//                           backend is away the last list is held for `backend_grace`, then sent
//                           with every device Unhealthy until it returns; the stream stays open.
//   GetPreferredAllocation  per container request, the matcher (matcher.h) over the pod cache, the
//                           ledger, kubelet's PodResources Get and the backend's own answer. It never
//                           returns an error and answers within `preferred_timeout`: each step gets
//                           what is left of it, and a step past it counts as failed (kUnknown views,
//                           no backend answer). When nothing planned matches and kubelet admits none
//                           of the cached pods without a plan (PodResources Get), the pod is taken to
//                           be missing from the pod cache (kubelet saw the bind first): the match is
//                           repeated on each cache change for up to `pod_cache_wait`.
//   Allocate                forwarded unchanged (deadline `allocate_timeout`); on success each
//                           container's devices go to the ledger under the holder IdentifyAllocation
//                           names. Errors are the backend's.
//   PreStartContainer       forwarded unchanged.
// Counters for tests and metrics. Thread-safe (kubelet may call concurrently on its re-allocation path).

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/prometheus.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "extender/node/plugin/backend_client.h"
#include "extender/node/plugin/ledger.h"
#include "extender/node/plugin/matcher.h"
#include "extender/node/plugin/pod_cache.h"
#include "extender/node/plugin/podresources_client.h"

namespace topofit::node {

struct FrontOptions {
  std::string node_name;
  std::chrono::milliseconds preferred_timeout{1000};
  std::chrono::milliseconds get_timeout{150};
  std::chrono::milliseconds allocate_timeout{30000};
  std::chrono::milliseconds backend_grace{10000};
  // How long GetPreferredAllocation waits for the pod cache to catch up with kubelet when no
  // planned container matches and no pod without a plan is the one kubelet admits.
  std::chrono::milliseconds pod_cache_wait{500};
};

// How one GetPreferredAllocation container request was answered; exactly one per request.
enum class PreferredOutcome {
  kPlan,             // The container's whole plan.
  kPartialPlan,      // The part of its plan kubelet still offers, the rest from the backend.
  kForeign,          // No planned container fits the request: the backend's answer.
  kBackendFallback,  // Planned containers fit, but kubelet is admitting none of them: the backend's answer.
  kTimeout,          // preferred_timeout ran out during the call (a step skipped or cut short).
};
inline constexpr int kPreferredOutcomes = 5;

struct FrontCounters {
  std::atomic<uint64_t> preferred{0};
  std::array<std::atomic<uint64_t>, kPreferredOutcomes> by_outcome{};  // Indexed by PreferredOutcome.
  // Wall time of each container request, from kubelet's call to the answer.
  Histogram preferred_seconds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  std::atomic<uint64_t> backend_preferred_errors{0};  // The backend's GetPreferredAllocation failed.
  std::atomic<uint64_t> allocate_calls{0};            // Allocate RPCs from kubelet, failed ones included.
  std::atomic<uint64_t> planned{0};     // Answered with the whole plan.
  std::atomic<uint64_t> partial{0};
  std::atomic<uint64_t> unplanned{0};
  std::atomic<uint64_t> tentative{0};
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> allocations_as_planned{0};  // Allocate's devices equal the holder's plan.
  std::atomic<uint64_t> allocate_errors{0};
};

class FrontPlugin final : public v1beta1::DevicePlugin::Service {
 public:
  FrontPlugin(FrontOptions options, BackendClient& backend, PodCache& pods, const PodResourcesClient& kubelet);

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* out) override;
  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* req,
                                      v1beta1::PreferredAllocationResponse* out) override;
  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* req,
                        v1beta1::AllocateResponse* out) override;
  grpc::Status PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest* req,
                                 v1beta1::PreStartContainerResponse* out) override;

  // The answer to one container request (what GetPreferredAllocation sends), for benchmarks
  // (front_preferred.cc).
  DeviceList Preferred(const v1beta1::ContainerPreferredAllocationRequest& req);

  // Ends every ListAndWatch stream (before the server shuts down); Resume() before serving again.
  void Shutdown();
  void Resume();

  // The reconciler's entry: kubelet's truth replaces the ledger (ledger.h).
  uint64_t LedgerSeq() const;
  void ApplyTruth(std::vector<LedgerEntry> truth, uint64_t sent_at);
  void RetainPods(const std::set<std::string>& live);
  void MarkEnded(const std::string& pod_uid);  // Ledger::MarkEnded
  Ledger LedgerCopy() const;
  const FrontCounters& counters() const { return counters_; }

 private:
  class PreferredCall;  // One request's deadline and the steps that spend it (front_preferred.cc).
  MatchResult AwaitPodCache(const PreferredRequest& r, PreferredCall& call, const ViewsFn& views,
                            std::shared_ptr<const std::vector<NodePod>>& pods, Ledger& ledger, MatchResult m);
  void CountPreferred(const PreferredRequest& r, const MatchResult& m, const PreferredCall& call);

  FrontOptions options_;
  BackendClient& backend_;
  PodCache& pods_;
  const PodResourcesClient& kubelet_;
  mutable std::mutex mu_;
  Ledger ledger_;
  std::optional<Decision> pending_;  // The last GetPreferredAllocation's decision, until an Allocate.
  std::optional<Holder> previous_;   // The last Allocate's holder.
  std::atomic<bool> shutdown_{false};
  FrontCounters counters_;
};

}  // namespace topofit::node
