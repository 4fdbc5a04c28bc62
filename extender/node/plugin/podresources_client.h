#pragma once
// PodResourcesClient: kubelet's PodResources v1 API over its unix socket.
//   Views() one Get(namespace, name) per query, all in flight at once on one completion queue that
//           the calling thread drives (no other thread involved), each with the deadline `timeout`
//           from the call, as the matcher's KubeletView of one container each: NOT_FOUND (or any
//           "not found" error) is kNotFound; the pod with devices of `resource` on that container
//           is kHasDevices, without is kAdmitting; a `regular_init` container (Get never reports
//           one) is kHasDevices when any container of the pod holds devices of `resource`, since
//           kubelet admits it first; RESOURCE_EXHAUSTED (kubelet's rate limit) is
//           asked again after a pause (5 ms, doubling to 40 ms) while the deadline allows; any other
//           failure is kUnknown. Returns one view per query, in order, when every Get has ended.
//           Get does not touch kubelet's allocation books (List does: never call it from an RPC).
//   List()  every pod's containers and their devices of `resource`, for the reconciler only.
//   Allocatable() the devices of `resource` kubelet can allocate (GetAllocatableResources).
// counters() says how many calls of each went out, and how many Gets the rate limit refused.
// Thread-safe; an empty socket path makes every call fail (Views: kUnknown).

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/node/plugin/matcher.h"

namespace v1 {
class PodResourcesLister;
}

namespace topofit::node {

struct PodDevices {
  std::string namespace_;
  std::string name;
  std::vector<std::pair<std::string, DeviceList>> containers;  // Only containers holding the resource.
};

// Calls to kubelet's PodResources API, each RPC sent (a retried Get counts once per attempt).
struct PodResourcesCounters {
  std::atomic<uint64_t> get{0};
  std::atomic<uint64_t> list{0};
  std::atomic<uint64_t> get_rate_limited{0};  // Gets kubelet's rate limit refused (RESOURCE_EXHAUSTED).
};

struct ViewQuery {
  std::string_view namespace_;
  std::string_view name;
  std::string_view container;
  bool regular_init = false;  // An init container without restartPolicy Always.
};

class PodResourcesClient {
 public:
  PodResourcesClient(const std::string& socket_path, std::string resource);
  ~PodResourcesClient();

  std::vector<KubeletView> Views(const std::vector<ViewQuery>& queries, std::chrono::milliseconds timeout) const;
  Result<std::vector<PodDevices>> List(std::chrono::milliseconds timeout) const;
  Result<DeviceList> Allocatable(std::chrono::milliseconds timeout) const;
  const PodResourcesCounters& counters() const { return counters_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  mutable PodResourcesCounters counters_;
};

}  // namespace topofit::node
