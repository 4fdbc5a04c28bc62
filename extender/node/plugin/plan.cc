#include "extender/node/plugin/plan.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace topofit::node {

using nlohmann::json;

namespace {

std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// limits[resource], else requests[resource]: an integer or its decimal string; 0 when absent or bad
// (the API server rejects non-integer extended resources, so a bad one never reaches kubelet).
int64_t Gpus(const json& container, std::string_view resource) {
  auto resources = container.find("resources");
  if (resources == container.end() || !resources->is_object()) return 0;
  for (const char* part : {"limits", "requests"}) {
    auto p = resources->find(part);
    if (p == resources->end() || !p->is_object()) continue;
    auto q = p->find(std::string(resource));
    if (q == p->end()) continue;
    if (q->is_number_integer()) return q->get<int64_t>();
    if (q->is_string()) {
      const std::string s = q->get<std::string>();
      if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return 0;
      return std::stoll(s);
    }
  }
  return 0;
}

}  // namespace

Result<NodePod> DecodeNodePod(const json& pod, std::string_view resource) {
  if (!pod.is_object()) return Error{"pod: expected an object"};
  auto meta_it = pod.find("metadata");
  if (meta_it == pod.end() || !meta_it->is_object()) return Error{"pod: no metadata"};
  const json& meta = *meta_it;
  NodePod p;
  p.uid = Str(meta, "uid");
  p.name = Str(meta, "name");
  p.namespace_ = Str(meta, "namespace");
  if (p.namespace_.empty()) p.namespace_ = "default";
  if (p.uid.empty()) return Error{"pod " + p.name + ": no metadata.uid"};
  p.creation_timestamp = Str(meta, "creationTimestamp");
  p.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (auto spec = pod.find("spec"); spec != pod.end() && spec->is_object()) {
    p.node_name = Str(*spec, "nodeName");
    for (const char* list : {"initContainers", "containers"}) {
      auto cs = spec->find(list);
      if (cs == spec->end() || !cs->is_array()) continue;
      for (const json& c : *cs) {
        if (!c.is_object()) continue;
        GpuContainer gc{Str(c, "name"), Gpus(c, resource), list[0] == 'i', false};
        gc.restartable = gc.init && Str(c, "restartPolicy") == "Always";
        if (gc.gpus > 0) p.containers.push_back(std::move(gc));
      }
    }
  }
  if (auto status = pod.find("status"); status != pod.end() && status->is_object()) p.phase = Str(*status, "phase");
  if (auto ann = meta.find("annotations"); ann != meta.end() && ann->is_object()) {
    if (auto plan = ann->find(kGpuPlanAnnotation); plan != ann->end() && plan->is_string()) {
      auto parsed = k8s::ParseGpuAssignment(plan->get<std::string>());
      if (parsed) p.plan = std::move(*parsed);
      else p.plan_error = parsed.error();
    }
    if (auto actual = ann->find(kGpuActualAnnotation); actual != ann->end() && actual->is_string()) {
      auto parsed = k8s::ParseGpuAssignment(actual->get<std::string>());
      if (parsed) p.actual = std::move(*parsed);
    }
  }
  return p;
}

Result<std::vector<NodePod>> DecodeNodePods(std::string_view text, std::string_view resource) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{"not JSON"};
  const json* items = &j;
  if (j.is_object() && j.contains("items")) items = &j["items"];
  std::vector<NodePod> pods;
  if (items->is_object()) {
    auto p = DecodeNodePod(*items, resource);
    if (!p) return Error{p.error()};
    pods.push_back(std::move(*p));
    return pods;
  }
  if (!items->is_array()) return Error{"expected a PodList, an array of pods or a pod"};
  for (size_t i = 0; i < items->size(); ++i) {
    auto p = DecodeNodePod((*items)[i], resource);
    if (!p) return Error{"items[" + std::to_string(i) + "]: " + p.error()};
    pods.push_back(std::move(*p));
  }
  return pods;
}

std::string JoinDevices(const DeviceList& devices) {
  std::string out;
  for (const auto& x : devices) out += (out.empty() ? "" : ",") + x;
  return out;
}

bool HoldsAsPlanned(const NodePod& pod, const GpuAssignment& plan, std::string_view container, const DeviceList& held) {
  const DeviceList* planned = plan.Find(container);
  if (!planned) return false;
  const std::set<std::string> held_set(held.begin(), held.end());
  if (held_set == std::set<std::string>(planned->begin(), planned->end())) return true;
  std::set<std::string> pool;  // What the pod's regular init containers were planned to leave.
  size_t left = 0;             // Of it, what kubelet has not given a long-lived container yet.
  for (const auto& c : pod.containers) {
    if (c.name == container) {
      const size_t size = static_cast<size_t>(std::max<int64_t>(c.gpus, 0));
      return size > 0 && size <= left && held.size() == size && held_set.size() == size &&
             std::includes(pool.begin(), pool.end(), held_set.begin(), held_set.end());
    }
    const DeviceList* s = plan.Find(c.name);
    const size_t n = s ? s->size() : 0;
    if (c.init && !c.restartable) {
      if (s) pool.insert(s->begin(), s->end());
      left = std::max(left, n);  // It reused the pool first, then added its own.
    } else {
      left -= std::min(left, n);
    }
  }
  return false;
}

}  // namespace topofit::node
