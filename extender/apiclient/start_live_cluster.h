#pragma once
// StartLiveCluster: what `topofit serve` calls to keep its ClusterModel current from the API server.
//
// ModelSink forwards watch deliveries to the model's writers (ApplyNode/DeleteNode/ApplyPod/
// DeletePod, all thread-safe and idempotent). The model must outlive the returned LiveCluster;
// destroy (or Stop) the LiveCluster before the model.

#include <memory>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/live_cluster.h"
#include "extender/model/cluster_model.h"

namespace topofit::apiclient {

class ModelSink final : public ClusterSink {
 public:
  explicit ModelSink(model::ClusterModel& model) : model_(model) {}
  void ApplyNode(const k8s::NodeObject& node) override { model_.ApplyNode(node); }
  void DeleteNode(std::string_view name) override { model_.DeleteNode(name); }
  void ApplyPod(const k8s::PodObject& pod) override { model_.ApplyPod(pod); }
  void DeletePod(std::string_view uid) override { model_.DeletePod(uid); }

 private:
  model::ClusterModel& model_;
};

// `api` from ConnectApi(options), shared with the ApiWriter given to the server.
inline std::unique_ptr<LiveCluster> StartLiveCluster(const LiveOptions& options, std::shared_ptr<ApiClient> api,
                                                     model::ClusterModel& model) {
  return LiveCluster::Start(options, std::move(api), std::make_unique<ModelSink>(model));
}

}  // namespace topofit::apiclient
