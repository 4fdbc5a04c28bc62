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

GroupLookup::Victim PodGroupLookup::VictimOf(const cluster::Holding& h) const {
  if (h.pod_group.empty()) return GroupLookup::VictimOf(h);
  const std::string_view namespace_ = std::string_view(h.pod).substr(0, h.pod.find('/'));
  const auto group = store_.Find(k8s::PodGroupObject::Api::kWorkload, namespace_, h.pod_group);
  if (!group || !group->disrupted_whole) return GroupLookup::VictimOf(h);
  return {group->priority.value_or(0), fmt::format("PodGroup {}", group->key())};
}

}  // namespace topofit::groups
