#pragma once
// PodGroupWatch: keeps a cluster::PodGroupStore equal to the cluster's PodGroups of both APIs
// (k8s/pod_group.h) - scheduling.k8s.io/v1alpha2 (the Workload API) and scheduling.x-k8s.io/v1alpha1
// (the coscheduling CRD) - by one Reflector each, on their own threads, over the client the other
// watches use.
//
// Either API may be missing: v1alpha2 is off unless kube-apiserver runs with
// --runtime-config=scheduling.k8s.io/v1alpha2=true, and the CRD is there only where scheduler-plugins,
// KubeRay or the Kubeflow trainer installed it. A missing one never breaks startup and never makes
// topofit not ready: its list is answered 404, which is logged once ("... is not served ..."), and it
// is tried again every `absent_retry` (60 s; a CRD installed later is picked up within that). A
// PodGroup that does not decode is skipped with a log line; one past the store's capacity too.
// PodGroupFeed (an ObjectStore) forwards decoded PodGroups and, after a re-list, erases what the
// list no longer has. Used by one reflector thread; the store must outlive it. Stop() (or the
// destructor) ends both threads promptly.

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "extender/apiclient/live_cluster.h"
#include "extender/apiclient/object_stores.h"
#include "extender/apiclient/reflector.h"
#include "extender/cluster/pod_group_store.h"

namespace topofit::apiclient {

inline constexpr const char* kWorkloadPodGroupsPath = "/apis/scheduling.k8s.io/v1alpha2/podgroups";
inline constexpr const char* kCoschedulingPodGroupsPath = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";

// Keyed "namespace/name" (a namespace holds no '/').
class PodGroupFeed final : public ObjectStore {
 public:
  PodGroupFeed(cluster::PodGroupStore& store, k8s::PodGroupObject::Api api, LogFn log)
      : ObjectStore(std::move(log), "name"), store_(store), api_(api) {}

 private:
  Applied Apply(std::string_view json) override;
  void Delete(const std::string& key) override;
  std::string KeyOf(const nlohmann::json& object) const override;
  cluster::PodGroupStore& store_;
  const k8s::PodGroupObject::Api api_;
};

class PodGroupWatch {
 public:
  static constexpr std::chrono::seconds kAbsentRetry{60};

  // Starts both threads; `api` and `store` must outlive this. options: the live watches' (timings,
  // page size, log); absent_retry: how often a missing API is asked again.
  PodGroupWatch(ApiClient& api, cluster::PodGroupStore& store, const LiveOptions& options,
                std::chrono::milliseconds absent_retry = kAbsentRetry);
  ~PodGroupWatch();
  void Stop();

  const Reflector& workload() const { return *workload_; }
  const Reflector& coscheduling() const { return *coscheduling_; }

 private:
  PodGroupFeed workload_feed_;
  PodGroupFeed coscheduling_feed_;
  std::unique_ptr<Reflector> workload_;
  std::unique_ptr<Reflector> coscheduling_;
};

}  // namespace topofit::apiclient
