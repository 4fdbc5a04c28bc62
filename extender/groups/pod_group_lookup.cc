#include "extender/groups/pod_group_lookup.h"

#include <fmt/format.h>

namespace topofit::groups {

Result<std::optional<GroupSpec>> PodGroupLookup::SpecOf(const cluster::PodRequest& pod, int members_seen) const {
  const k8s::WorkloadGroupRef& ref = pod.group_ref;
  if (ref.empty()) return GroupLookup::SpecOf(pod, members_seen);
  const bool workload = !ref.pod_group_name.empty();
  const auto api = workload ? k8s::PodGroupObject::Api::kWorkload : k8s::PodGroupObject::Api::kCoscheduling;
  const std::string& name = workload ? ref.pod_group_name : ref.coscheduling_pod_group;
  auto group = store_.Find(api, pod.namespace_, name);
  if (!group) {
    return Error{fmt::format("PodGroup {}/{}{} not found yet", pod.namespace_, name,
                             workload ? "" : " (scheduling.x-k8s.io)")};
  }
  auto spec = GroupFromPodGroup(pod, ref, *group, members_seen, pod.group_annotations, levels());
  if (!spec.ok()) return Error{spec.error()};
  return std::optional<GroupSpec>(std::move(*spec));
}

std::optional<k8s::PodGroupObject> PodGroupLookup::DisruptedWhole(const cluster::Holding& h) const {
  if (h.pod_group.empty()) return std::nullopt;
  const std::string_view namespace_ = std::string_view(h.pod).substr(0, h.pod.find('/'));
  auto group = store_.Find(k8s::PodGroupObject::Api::kWorkload, namespace_, h.pod_group);
  if (!group || !group->disrupted_whole) return std::nullopt;
  return group;
}

int32_t PodGroupLookup::VictimPriority(const cluster::Holding& h) const {
  const auto group = DisruptedWhole(h);
  return group ? group->priority.value_or(0) : h.priority;
}

std::string PodGroupLookup::VictimName(const cluster::Holding& h) const {
  const auto group = DisruptedWhole(h);
  return group ? fmt::format("PodGroup {}", group->key()) : h.pod;
}

}  // namespace topofit::groups
