#include "extender/apiclient/start_live_cluster.h"

namespace topofit::apiclient {

std::string ModelSink::HolderNode(std::string_view uid) const {
  if (!requeue_ || model_.waits().size() == 0) return {};
  auto pod = model_.PodByUid(uid);
  return pod && pod->count > 0 ? pod->node : std::string();
}

void ModelSink::Freed(const std::string& node) {
  auto info = model_.Node(node);
  if (!info) return;
  for (const auto& pod : model_.waits().Freed(node, static_cast<int>(info->free.size()))) requeue_(pod, node);
}

void ModelSink::ApplyPod(const k8s::PodObject& pod) {
  std::string before = HolderNode(pod.meta.uid);
  model_.ApplyPod(pod);
  if (before.empty()) return;
  auto after = model_.PodByUid(pod.meta.uid);
  if (!after || after->node != before || after->count == 0) Freed(before);
}

void ModelSink::DeletePod(std::string_view uid) {
  std::string before = HolderNode(uid);
  model_.DeletePod(uid);
  if (!before.empty()) Freed(before);
}

}  // namespace topofit::apiclient
