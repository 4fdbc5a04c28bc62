#include "extender/node/kube_node_publisher.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "extender/apiclient/events.h"
#include "extender/apiclient/kubeconfig.h"

namespace topofit::node {
namespace {

std::string NodePath(const std::string& node) { return "/api/v1/nodes/" + apiclient::UrlEncode(node); }


}  // namespace

Result<std::unique_ptr<apiclient::ApiClient>> ConnectToCluster(const std::string& kubeconfig,
                                                          const std::string& context) {
  auto cfg = kubeconfig.empty() ? apiclient::InClusterConfig() : apiclient::LoadKubeconfig(kubeconfig, context);
  if (!cfg.ok()) return Error{cfg.error()};
  return apiclient::ApiClient::Create(std::move(*cfg));
}

Result<std::map<std::string, std::string>> KubeNodePublisher::GetNodeAnnotations(const std::string& node) {
  auto res = api_.Do("GET", NodePath(node));
  if (!res.ok()) return Error{fmt::format("get node {}: {}", node, res.error())};
  if (res->status != 200) return Error{fmt::format("get node {}: {}", node, apiclient::ApiErrorMessage(*res))};
  auto j = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error{fmt::format("get node {}: reply is not a JSON object", node)};
  std::map<std::string, std::string> annotations;
  const auto& meta = j.value("metadata", nlohmann::json::object());
  if (meta.contains("uid") && meta["uid"].is_string()) node_uid_ = meta["uid"].get<std::string>();
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    for (const auto& [k, v] : meta["annotations"].items()) {
      if (v.is_string()) annotations[k] = v.get<std::string>();
    }
  }
  return annotations;
}

Status KubeNodePublisher::PatchNodeAnnotations(const std::string& node,
                                               const std::map<std::string, std::string>& annotations) {
  nlohmann::json patch = {{"metadata", {{"annotations", annotations}}}};
  return apiclient::MergePatch(api_, NodePath(node), patch.dump(), "annotate node " + node);
}

Status KubeNodePublisher::CreateNodeEvent(const std::string& node, const NodeEvent& event) {
  apiclient::EventSpec spec;
  spec.kind = "Node";
  spec.name = node;
  spec.uid = node_uid_;
  spec.type = event.type;
  spec.reason = event.reason;
  spec.message = event.message;
  spec.component = "topofit-node";
  spec.host = node;
  return apiclient::CreateEvent(api_, spec);
}

}  // namespace topofit::node
