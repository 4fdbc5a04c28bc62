#include "extender/node/kube_node_publisher.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "extender/apiclient/kubeconfig.h"

namespace topofit::node {
namespace {

std::string NodePath(const std::string& node) { return "/api/v1/nodes/" + apiclient::UrlEncode(node); }

std::string NowRfc3339() {
  auto now = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

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
  auto res = api_.Do("PATCH", NodePath(node), patch.dump(), "application/merge-patch+json");
  if (!res.ok()) return Error{fmt::format("annotate node {}: {}", node, res.error())};
  if (res->status / 100 != 2) return Error{fmt::format("annotate node {}: {}", node, apiclient::ApiErrorMessage(*res))};
  return Status::Ok();
}

Status KubeNodePublisher::CreateNodeEvent(const std::string& node, const NodeEvent& event) {
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  std::string now = NowRfc3339();
  nlohmann::json ev = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", fmt::format("{}.{:x}", node, nanos)}, {"namespace", "default"}}},
      {"involvedObject", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}},
      {"reason", event.reason},
      {"message", event.message},
      {"type", event.type},
      {"source", {{"component", "topofit-agent"}, {"host", node}}},
      {"reportingComponent", "topofit-agent"},
      {"reportingInstance", node},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1},
  };
  if (!node_uid_.empty()) ev["involvedObject"]["uid"] = node_uid_;
  auto res = api_.Do("POST", "/api/v1/namespaces/default/events", ev.dump(), "application/json");
  if (!res.ok()) return Error{fmt::format("create event on node {}: {}", node, res.error())};
  if (res->status / 100 != 2) return Error{fmt::format("create event on node {}: {}", node, apiclient::ApiErrorMessage(*res))};
  return Status::Ok();
}

}  // namespace topofit::node
