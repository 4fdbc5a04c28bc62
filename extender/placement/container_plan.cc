#include "extender/placement/container_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace topofit::placement {

Result<ContainerSplit> SplitAmongContainers(const std::vector<k8s::ContainerGpus>& containers, GpuSet chosen) {
  if (containers.empty()) return Error{"the pod has no container that requests GPUs"};
  const std::vector<int> order = chosen.Indices();
  int64_t long_lived = 0, peak = 0, sidecars = 0;
  for (const auto& c : containers) {
    if (c.name.empty()) return Error{"a GPU container has no name"};
    if (!c.init || c.restartable) long_lived += c.gpus;
    if (c.init && c.restartable) sidecars += c.gpus;
    if (c.init && !c.restartable) peak = std::max(peak, sidecars + c.gpus);
  }
  const int64_t effective = std::max(long_lived, peak);
  if (effective != chosen.size()) {
    return Error{fmt::format("{} GPUs chosen but the containers need {}", chosen.size(), effective)};
  }
  // Runs of the long-lived containers, in kubelet's order (init sidecars come first in `containers`).
  std::vector<GpuSet> runs(containers.size());
  size_t next = 0;
  for (size_t i = 0; i < containers.size(); ++i) {
    const auto& c = containers[i];
    if (c.init && !c.restartable) continue;
    for (int64_t k = 0; k < c.gpus; ++k) runs[i].Add(order[next++]);
  }
  ContainerSplit out;
  GpuSet sidecars_so_far;
  for (size_t i = 0; i < containers.size(); ++i) {
    const auto& c = containers[i];
    if (c.init && !c.restartable) {
      GpuSet mine;
      for (int g : order) {
        if (mine.size() == c.gpus) break;
        if (!sidecars_so_far.contains(g)) mine.Add(g);
      }
      out.emplace_back(c.name, mine);
      continue;
    }
    if (c.init) sidecars_so_far = sidecars_so_far | runs[i];
    out.emplace_back(c.name, runs[i]);
  }
  return out;
}

Result<k8s::GpuAssignment> MakeGpuPlan(const std::vector<k8s::ContainerGpus>& containers, GpuSet chosen,
                                       const std::string& node, const std::vector<std::string>& uuids,
                                       int64_t unix_seconds) {
  if (uuids.empty()) return Error{fmt::format("node {} publishes no GPU UUIDs (index-only placement)", node)};
  auto split = SplitAmongContainers(containers, chosen);
  if (!split.ok()) return Error{split.error()};
  k8s::GpuAssignment plan;
  plan.node = node;
  plan.unix_seconds = unix_seconds;
  for (const auto& [name, gpus] : *split) {
    std::vector<std::string> ids;
    for (int g : gpus.Indices()) {
      if (g >= static_cast<int>(uuids.size())) return Error{fmt::format("GPU {} has no UUID on node {}", g, node)};
      ids.push_back(uuids[g]);
    }
    plan.containers.emplace_back(name, std::move(ids));
  }
  return plan;
}

}  // namespace topofit::placement
