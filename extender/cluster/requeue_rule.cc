#include "extender/cluster/requeue_rule.h"

namespace topofit::cluster {

void RequeueRule::TurnedAway(const PodRequest& pod, const std::vector<std::string>& capacity_failed) {
  if (!pod.wants_gpus()) return;
  model_.waits().Note({pod.uid, pod.namespace_, pod.name, pod.gpus}, capacity_failed);
}

std::string RequeueRule::HolderNode(std::string_view uid) const {
  if (model_.waits().size() == 0) return {};
  auto pod = model_.PodByUid(uid);
  return pod && pod->count > 0 ? pod->node : std::string();
}

std::vector<Requeue> RequeueRule::Freed(const std::string& node) {
  std::vector<Requeue> out;
  if (model_.waits().size() == 0) return out;
  auto info = model_.Node(node);
  if (!info) return out;
  for (auto& pod : model_.waits().Freed(node, static_cast<int>(info->free.size()))) out.push_back({std::move(pod), node});
  return out;
}

std::vector<Requeue> RequeueRule::ApplyPod(const k8s::PodObject& pod) {
  std::string before = HolderNode(pod.meta.uid);
  model_.ApplyPod(pod);
  if (before.empty()) return {};
  auto after = model_.PodByUid(pod.meta.uid);
  if (!after || after->node != before || after->count == 0) return Freed(before);
  return {};
}

std::vector<Requeue> RequeueRule::DeletePod(std::string_view uid) {
  std::string before = HolderNode(uid);
  model_.DeletePod(uid);
  if (before.empty()) return {};
  return Freed(before);
}

}  // namespace topofit::cluster
