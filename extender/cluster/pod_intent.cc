#include "extender/cluster/pod_intent.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/strings.h"

namespace topofit::cluster {

std::string_view ToString(TopologyPolicy policy) {
  switch (policy) {
    case TopologyPolicy::kBestEffort: return "best-effort";
    case TopologyPolicy::kRequired: return "required";
    case TopologyPolicy::kNone: return "none";
  }
  return "?";
}

Result<PodIntent> ParsePodIntent(const std::map<std::string, std::string>& annotations) {
  PodIntent intent;
  std::vector<std::string> errors;
  if (auto it = annotations.find(k8s::kTopologyPolicyAnnotation); it != annotations.end()) {
    std::string v = AsciiLower(Trim(it->second));
    if (v == "best-effort" || v == "besteffort") {
      intent.policy = TopologyPolicy::kBestEffort;
    } else if (v == "required") {
      intent.policy = TopologyPolicy::kRequired;
    } else if (v == "none") {
      intent.policy = TopologyPolicy::kNone;
    } else {
      errors.push_back(fmt::format("invalid {} '{}': expected best-effort, required or none",
                                   k8s::kTopologyPolicyAnnotation, it->second));
    }
  }
  if (auto it = annotations.find(k8s::kMinLinkAnnotation); it != annotations.end()) {
    std::string_view v = Trim(it->second);
    auto cls = ParseLinkClassName(v);
    if (cls) {
      intent.min_link = *cls;
    } else {
      errors.push_back(fmt::format("invalid {} '{}': expected NV, PIX, PXB, PHB, NODE or SYS",
                                   k8s::kMinLinkAnnotation, it->second));
    }
  }
  if (auto it = annotations.find(k8s::kReplicaPlacementAnnotation); it != annotations.end()) {
    std::string v = AsciiLower(Trim(it->second));
    if (v == "distinct" || v == "packed") {
      intent.packed_replicas = v == "packed";
    } else {
      errors.push_back(fmt::format("invalid {} '{}': expected distinct or packed", k8s::kReplicaPlacementAnnotation,
                                   it->second));
    }
  }
  if (!errors.empty()) return Error{fmt::format("{}", fmt::join(errors, "; "))};
  return intent;
}

PodRequest MakePodRequest(const k8s::PodObject& pod) {
  PodRequest r;
  r.uid = pod.meta.uid;
  r.namespace_ = pod.meta.namespace_;
  r.name = pod.meta.name;
  r.gpus = static_cast<int>(std::clamp<int64_t>(pod.gpus, 0, 1 << 20));
  r.priority = pod.priority;
  r.preempt_never = pod.preempt_never;
  r.cpu_milli = pod.cpu_milli;
  r.memory_bytes = pod.memory_bytes;
  r.gpu_products = pod.gpu_products;
  r.containers = pod.gpu_containers;
  const std::string_view group_key = k8s::kGroupAnnotation;  // topofit.io/group and topofit.io/group-*
  for (auto it = pod.meta.annotations.lower_bound(k8s::kGroupAnnotation);
       it != pod.meta.annotations.end() && it->first.starts_with(group_key); ++it) {
    const std::string_view rest = std::string_view(it->first).substr(group_key.size());
    if (rest.empty() || rest.front() == '-') r.group_annotations.insert(*it);
  }
  r.group_ref = pod.group_ref;
  r.nominated_node = pod.nominated_node;
  r.group = k8s::GroupNameOf(pod.group_ref, r.group_annotations);
  auto intent = ParsePodIntent(pod.meta.annotations);
  if (intent.ok()) {
    r.intent = *intent;
  } else {
    r.error = intent.error();
  }
  return r;
}

}  // namespace topofit::cluster
