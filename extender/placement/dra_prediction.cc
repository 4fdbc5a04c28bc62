#include "extender/placement/dra_prediction.h"

#include <fmt/format.h>

namespace topofit::placement {

std::string DraBindView::Note() const {
  if (!dra) return {};
  if (!allocated) return fmt::format("DRA claim not seen yet; predicted GPUs {}", predicted.ToString());
  if (*allocated == predicted) return fmt::format("DRA claim allocated GPUs {} as predicted", allocated->ToString());
  return fmt::format("DRA claim allocated GPUs {}, not the predicted {}", allocated->ToString(),
                     predicted.empty() ? "(none)" : predicted.ToString());
}

DraBindView ViewDraBind(const Pipeline& pipeline, const cluster::PodRequest& pod, std::string_view node,
                        const std::optional<cluster::DraAllocation>& allocation) {
  DraBindView v;
  std::optional<cluster::PodGpuInfo> own = pipeline.model().PodByUid(pod.uid);
  auto reader = pipeline.model().Read();
  const cluster::NodeState* n = reader.Find(node);
  if (!n || !n->spec().dra() || !n->topology()) return v;
  v.dra = true;
  GpuSet free = n->free();
  if (own && own->node == node) free = free | own->gpus;
  v.predicted = pipeline.placer().FirstFit(*n->topology(), free, pod.gpus, pod.intent, n->spec().first_fit).gpus;
  if (!allocation || allocation->node != node) return v;
  GpuSet got;
  for (const auto& [request, ids] : allocation->requests)
    for (const std::string& id : ids)
      if (int i = n->spec().IndexOf(id); i >= 0) got.Add(i);
  v.allocated = got;
  return v;
}

}  // namespace topofit::placement
