#include "extender/apiclient/api_writer.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "base/log.h"
#include "extender/k8s/objects.h"

namespace topofit::apiclient {
namespace {

std::string StringAt(const nlohmann::json& j, const char* pointer) {
  nlohmann::json::json_pointer ptr(pointer);
  if (!j.contains(ptr)) return {};
  const auto& v = j.at(ptr);
  return v.is_string() ? v.get<std::string>() : std::string();
}

}  // namespace

std::string PodPath(const std::string& namespace_, const std::string& name) {
  return "/api/v1/namespaces/" + UrlEncode(namespace_) + "/pods/" + UrlEncode(name);
}

Status PatchPodAnnotations(ApiClient& api, const std::string& ns, const std::string& name, const std::string& uid,
                           const std::map<std::string, std::string>& annotations) {
  nlohmann::json patch = {{"metadata", {{"annotations", annotations}}}};
  if (!uid.empty()) patch["metadata"]["uid"] = uid;
  return MergePatch(api, PodPath(ns, name), patch.dump(), "annotate pod " + ns + "/" + name);
}

Status ApiWriter::Bind(const std::string& namespace_, const std::string& name, const std::string& uid,
                       const std::string& node, const std::map<std::string, std::string>& annotations) {
  nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", {{"name", name}, {"namespace", namespace_}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}},
  };
  if (!uid.empty()) binding["metadata"]["uid"] = uid;
  if (!annotations.empty()) binding["metadata"]["annotations"] = annotations;
  std::string what = "bind pod " + namespace_ + "/" + name + " to " + node + ": ";
  auto res = api_.Do("POST", PodPath(namespace_, name) + "/binding", binding.dump(), "application/json");
  if (res.ok() && res->status / 100 == 2) return Status::Ok();
  std::string failure = res.ok() ? ApiErrorMessage(*res) : res.error();

  // Already bound to this node with our annotations (our earlier attempt succeeded but its reply
  // was lost)? Success.
  auto pod = api_.Do("GET", PodPath(namespace_, name));
  if (pod.ok() && pod->status == 200) {
    auto j = nlohmann::json::parse(pod->body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      bool ours = StringAt(j, "/spec/nodeName") == node && (uid.empty() || StringAt(j, "/metadata/uid") == uid);
      const nlohmann::json* got = j.contains("metadata") && j["metadata"].contains("annotations")
                                      ? &j["metadata"]["annotations"] : nullptr;
      for (const auto& [k, v] : annotations) {
        ours = ours && got && got->is_object() && got->contains(k) && (*got)[k].is_string() && (*got)[k] == v;
      }
      if (ours) return Status::Ok();
    }
  }
  return Error{what + failure};
}

void ApiWriter::RecordPodEvent(k8s::PodEvent event) {
  EventSpec spec;
  spec.kind = "Pod";
  spec.name = std::move(event.name);
  spec.namespace_ = std::move(event.ns);
  spec.uid = std::move(event.uid);
  spec.type = std::move(event.type);
  spec.reason = std::move(event.reason);
  spec.message = std::move(event.message);
  spec.component = "topofit";
  QueueEvent(*writes_, api_, std::move(spec));
}

void ApiWriter::RequeuePod(const std::string& ns, const std::string& name, const std::string& uid) {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  std::map<std::string, std::string> annotations = {{k8s::kRequeuedAtAnnotation, fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now)}};
  writes_->Push("requeue pod " + ns + "/" + name,
                [this, ns, name, uid, annotations] { return PatchPodAnnotations(api_, ns, name, uid, annotations); });
}

void ApiWriter::NominatePod(const std::string& ns, const std::string& name, const std::string& uid,
                            const std::string& node) {
  nlohmann::json patch = {{"status", {{"nominatedNodeName", node.empty() ? nlohmann::json() : nlohmann::json(node)}}}};
  if (!uid.empty()) patch["metadata"]["uid"] = uid;
  writes_->Push("nominate pod " + ns + "/" + name + " to '" + node + "'", [this, ns, name, node, patch] {
    const std::string pod = ns + "/" + name;
    auto res = api_.Do("PATCH", PodPath(ns, name) + "/status", patch.dump(), "application/merge-patch+json");
    if (!res.ok()) return Status(Error{"nominate pod " + pod + ": " + res.error()});
    const std::string message = res->status / 100 == 2 ? "" : ApiErrorMessage(*res);
    // The pod was bound before the write came: kube-apiserver refuses a nomination on a bound pod
    // (422), and there is nothing left to nominate.
    if (res->status == 422 && message.find("already bound") != std::string::npos) {
      Log(LogLevel::kInfo, "nomination not needed: the pod is bound", {{"pod", pod}, {"node", node}});
      return Status::Ok();
    }
    if (!message.empty()) return Status(Error{"nominate pod " + pod + ": " + message});
    Log(LogLevel::kInfo, "nominated", {{"pod", pod}, {"node", node.empty() ? "(none)" : node}});
    return Status::Ok();
  });
}

}  // namespace topofit::apiclient
