#include "extender/k8s/pod_group.h"

#include "extender/k8s/objects.h"

namespace topofit::k8s {

std::string_view ToString(PodGroupObject::Api api) {
  return api == PodGroupObject::Api::kWorkload ? "scheduling.k8s.io" : "scheduling.x-k8s.io";
}

bool PodGroupApiOf(std::string_view api_version, PodGroupObject::Api* api) {
  if (api_version == kWorkloadPodGroupApiVersion) {
    *api = PodGroupObject::Api::kWorkload;
  } else if (api_version == kCoschedulingPodGroupApiVersion) {
    *api = PodGroupObject::Api::kCoscheduling;
  } else {
    return false;
  }
  return true;
}

std::string GroupNameOf(const WorkloadGroupRef& ref, const std::map<std::string, std::string>& annotations) {
  if (!ref.pod_group_name.empty()) return ref.pod_group_name;
  if (!ref.coscheduling_pod_group.empty()) return ref.coscheduling_pod_group;
  auto it = annotations.find(kGroupAnnotation);
  return it == annotations.end() ? std::string() : it->second;
}

}  // namespace topofit::k8s
