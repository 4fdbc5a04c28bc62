#include "extender/node/plugin/kube_actual_publisher.h"

#include "extender/apiclient/api_writer.h"

namespace topofit::node {

KubeActualPublisher::KubeActualPublisher(apiclient::ApiClient& api, std::string node)
    : api_(api), node_(std::move(node)), nodes_(api), events_(api) {}

Status KubeActualPublisher::PatchPod(const NodePod& pod, const std::map<std::string, std::string>& annotations) {
  return apiclient::PatchPodAnnotations(api_, pod.namespace_, pod.name, pod.uid, annotations);
}

void KubeActualPublisher::PodEvent(const NodePod& pod, const std::string& type, const std::string& reason,
                                   const std::string& message) {
  apiclient::EventSpec spec;
  spec.kind = "Pod";
  spec.name = pod.name;
  spec.namespace_ = pod.namespace_;
  spec.uid = pod.uid;
  spec.type = type;
  spec.reason = reason;
  spec.message = message;
  spec.component = "topofit-node";
  spec.host = node_;
  events_.Record(std::move(spec));
}

Status KubeActualPublisher::PatchNode(const std::string& node, const std::map<std::string, std::string>& annotations) {
  return nodes_.PatchNodeAnnotations(node, annotations);
}

}  // namespace topofit::node
