#pragma once
// ModelSink: the ClusterSink that keeps `topofit serve`'s ClusterModel current from the API server's
// watches, and StartLiveCluster, which starts those watches into it.
//
// Deliveries go to the model's writers (ApplyNode/DeleteNode/ApplyPod/DeletePod, all thread-safe and
// idempotent). With a `requeue` function, pod deliveries go through the RequeueRule
// (extender/cluster/requeue_rule.h), and every pod it returns - waiting for GPUs that the delivery
// freed - is handed to `requeue` (KubeWriter::RequeuePod). The model must outlive the returned
// LiveCluster; destroy (or Stop) the LiveCluster before the model.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/live_cluster.h"
#include "extender/cluster/cluster_model.h"
#include "extender/cluster/requeue_rule.h"

namespace topofit::apiclient {

using RequeueFn = std::function<void(const cluster::WaitingPod& pod, const std::string& node)>;

class ModelSink final : public ClusterSink {
 public:
  explicit ModelSink(cluster::ClusterModel& model, RequeueFn requeue = nullptr)
      : model_(model), rule_(model), requeue_(std::move(requeue)) {}
  void ApplyNode(const k8s::NodeObject& node) override { model_.ApplyNode(node); }
  void DeleteNode(std::string_view name) override { model_.DeleteNode(name); }
  void ApplyPod(const k8s::PodObject& pod) override;
  void DeletePod(std::string_view uid) override;

 private:
  void Send(const std::vector<cluster::Requeue>& requeues) const;

  cluster::ClusterModel& model_;
  cluster::RequeueRule rule_;
  RequeueFn requeue_;
};

// `api` from ConnectApi(options), shared with the ApiWriter given to the server.
inline std::unique_ptr<LiveCluster> StartLiveCluster(const LiveOptions& options, std::shared_ptr<ApiClient> api,
                                                     cluster::ClusterModel& model, RequeueFn requeue = nullptr) {
  return LiveCluster::Start(options, std::move(api), std::make_unique<ModelSink>(model, std::move(requeue)));
}

}  // namespace topofit::apiclient
