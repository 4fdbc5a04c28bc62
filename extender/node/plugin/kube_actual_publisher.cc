#include "extender/node/plugin/kube_actual_publisher.h"

#include <nlohmann/json.hpp>

namespace topofit::node {

KubeActualPublisher::KubeActualPublisher(apiclient::ApiClient& api, std::string node)
    : api_(api), node_(std::move(node)), nodes_(api), events_(api) {}

Status KubeActualPublisher::PatchPod(const NodePod& pod, const std::map<std::string, std::string>& annotations) {
  nlohmann::json patch = {{"metadata", {{"uid", pod.uid}, {"annotations", annotations}}}};
  std::string path = "/api/v1/namespaces/" + apiclient::UrlEncode(pod.namespace_) + "/pods/" + apiclient::UrlEncode(pod.name);
  auto res = api_.Do("PATCH", path, patch.dump(), "application/merge-patch+json");
  if (!res.ok()) return Error{"annotate pod " + pod.key() + ": " + res.error()};
  if (res->status / 100 != 2) return Error{"annotate pod " + pod.key() + ": " + apiclient::ApiErrorMessage(*res)};
  return Status::Ok();
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
