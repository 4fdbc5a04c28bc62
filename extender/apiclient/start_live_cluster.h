#pragma once
// StartLiveCluster: what `topofit serve` calls to keep its ClusterModel current from the API server.
//
// ModelSink forwards watch deliveries to the model's writers (ApplyNode/DeleteNode/ApplyPod/
// DeletePod, all thread-safe and idempotent). When a pod update or deletion frees a pod's GPUs, the
// pods waiting for GPUs on that node that now fit (the model's CapacityWaits) go to `requeue`, which
// asks kube-scheduler to try them again (KubeWriter::RequeuePod); nothing is looked up while no pod
// waits. The model must outlive the returned LiveCluster; destroy (or Stop) the LiveCluster before
// the model.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/live_cluster.h"
#include "extender/cluster/cluster_model.h"

namespace topofit::apiclient {

using RequeueFn = std::function<void(const cluster::WaitingPod& pod, const std::string& node)>;

class ModelSink final : public ClusterSink {
 public:
  explicit ModelSink(cluster::ClusterModel& model, RequeueFn requeue = nullptr)
      : model_(model), requeue_(std::move(requeue)) {}
  void ApplyNode(const k8s::NodeObject& node) override { model_.ApplyNode(node); }
  void DeleteNode(std::string_view name) override { model_.DeleteNode(name); }
  void ApplyPod(const k8s::PodObject& pod) override;
  void DeletePod(std::string_view uid) override;

 private:
  // The node `uid` holds GPUs on while pods wait for GPUs; "" otherwise.
  std::string HolderNode(std::string_view uid) const;
  // After GPUs were freed on `node`: requeues the waiting pods that now fit there.
  void Freed(const std::string& node);

  cluster::ClusterModel& model_;
  RequeueFn requeue_;
};

// `api` from ConnectApi(options), shared with the ApiWriter given to the server.
inline std::unique_ptr<LiveCluster> StartLiveCluster(const LiveOptions& options, std::shared_ptr<ApiClient> api,
                                                     cluster::ClusterModel& model, RequeueFn requeue = nullptr) {
  return LiveCluster::Start(options, std::move(api), std::make_unique<ModelSink>(model, std::move(requeue)));
}

}  // namespace topofit::apiclient
