#include "extender/groups/group_lookup.h"

namespace topofit::groups {

Result<std::optional<GroupSpec>> GroupLookup::SpecOf(const cluster::PodRequest& pod, int /*members_seen*/) const {
  return GroupFromAnnotations(pod, pod.group_annotations, levels_);
}

}  // namespace topofit::groups
