#pragma once
// ModelSink: the ClusterSink that keeps `topofit serve`'s ClusterModel current from the API server's
// watches, and StartLiveCluster, which starts those watches into it.
//
// Deliveries go to the model's writers (ApplyNode/DeleteNode/ApplyPod/DeletePod, all thread-safe and
// idempotent) through the DraCluster (extender/cluster/dra_cluster.h), which adds what DRA says:
// nodes whose GPUs DRA serves, and the GPUs of allocated ResourceClaims. With a `requeue` function, pod deliveries go through the RequeueRule
// (extender/cluster/requeue_rule.h), and every pod it returns - waiting for GPUs that the delivery
// freed - is handed to `requeue` (KubeWriter::RequeuePod); so are those waiting where a ResourceClaim's
// allocation went (RequeueRule::Freed). The model must outlive the returned
// LiveCluster; destroy (or Stop) the LiveCluster before the model.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/live_cluster.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/dra_cluster.h"
#include "extender/cluster/requeue_rule.h"

namespace topofit::apiclient {

using RequeueFn = std::function<void(const cluster::WaitingPod& pod, const std::string& node)>;

class ModelSink final : public ClusterSink {
 public:
  // dra: shared with the bind path (ExtenderVerbs::SetDra); null: the sink keeps its own.
  explicit ModelSink(cluster::ClusterModel& model, RequeueFn requeue = nullptr, cluster::DraCluster* dra = nullptr)
      : model_(model),
        owned_dra_(dra ? nullptr : std::make_unique<cluster::DraCluster>(model)),
        dra_(dra ? *dra : *owned_dra_),
        rule_(model),
        requeue_(std::move(requeue)) {}
  void ApplyNode(const k8s::NodeObject& node) override { dra_.ApplyNode(node); }
  void DeleteNode(std::string_view name) override { dra_.DeleteNode(name); }
  void ApplyPod(const k8s::PodObject& pod) override;
  void DeletePod(std::string_view uid) override;
  void ApplyDeviceClass(const k8s::DeviceClassObject& c) override { dra_.ApplyDeviceClass(c); }
  void DeleteDeviceClass(std::string_view name) override { dra_.DeleteDeviceClass(name); }
  void ApplyResourceSlice(const k8s::ResourceSliceObject& s) override { dra_.ApplyResourceSlice(s); }
  void DeleteResourceSlice(std::string_view name) override { dra_.DeleteResourceSlice(name); }
  void ApplyResourceClaim(const k8s::ResourceClaimObject& c) override { Freed(dra_.ApplyResourceClaim(c)); }
  void DeleteResourceClaim(std::string_view uid) override { Freed(dra_.DeleteResourceClaim(uid)); }

 private:
  void Send(const std::vector<cluster::Requeue>& requeues) const;
  // Requeues the pods waiting on the nodes where a claim freed GPUs.
  void Freed(const std::vector<std::string>& nodes);

  cluster::ClusterModel& model_;
  std::unique_ptr<cluster::DraCluster> owned_dra_;
  cluster::DraCluster& dra_;
  cluster::RequeueRule rule_;
  RequeueFn requeue_;
};

// `api` from ConnectApi(options), shared with the ApiWriter given to the server.
// dra (optional) must outlive the LiveCluster too.
inline std::unique_ptr<LiveCluster> StartLiveCluster(const LiveOptions& options, std::shared_ptr<ApiClient> api,
                                                     cluster::ClusterModel& model, RequeueFn requeue = nullptr,
                                                     cluster::DraCluster* dra = nullptr) {
  return LiveCluster::Start(options, std::move(api), std::make_unique<ModelSink>(model, std::move(requeue), dra));
}

}  // namespace topofit::apiclient
