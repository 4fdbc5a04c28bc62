#pragma once
// KubeActualPublisher: the ActualPublisher (reconciler.h) over the Kubernetes API. Pods: a JSON
// merge patch carrying metadata.uid, so the API server refuses it (409) for a pod re-created under
// the same name; Events from component topofit-node (best effort, on a background EventRecorder);
// the Node through KubeNodePublisher (the topology publisher's). Borrows the ApiClient.

#include <memory>

#include "extender/apiclient/api_client.h"
#include "extender/apiclient/events.h"
#include "extender/node/kube_node_publisher.h"
#include "extender/node/plugin/reconciler.h"

namespace topofit::node {

class KubeActualPublisher : public ActualPublisher {
 public:
  KubeActualPublisher(apiclient::ApiClient& api, std::string node);

  Status PatchPod(const NodePod& pod, const std::map<std::string, std::string>& annotations) override;
  void PodEvent(const NodePod& pod, const std::string& type, const std::string& reason,
                const std::string& message) override;
  Status PatchNode(const std::string& node, const std::map<std::string, std::string>& annotations) override;

 private:
  apiclient::ApiClient& api_;
  std::string node_;
  KubeNodePublisher nodes_;
  apiclient::EventRecorder events_;
};

}  // namespace topofit::node
