#include "extender/model/score_plugins.h"

#include <algorithm>

namespace topofit::model {

std::vector<std::unique_ptr<ScorePlugin>> AllScorePlugins() {
  std::vector<std::unique_ptr<ScorePlugin>> out;
  out.push_back(std::make_unique<SetQualityScore>());
  out.push_back(std::make_unique<PackingScore>());
  out.push_back(std::make_unique<FragmentationScore>());
  out.push_back(std::make_unique<StrandingScore>());
  return out;
}

void SetQualityScore::PreScore(CycleState& state, std::span<const NodeView> nodes,
                               std::span<const Candidate> candidates) const {
  uint32_t best = 0;
  for (const Candidate& c : candidates)
    if (c.found) best = std::max(best, c.ring_mbps);
  state.best_ring_mbps = best;
}

double SetQualityScore::Score(const CycleState& state, const NodeView& node, const Candidate& c) const {
  const PodRequest& pod = state.pod();
  if (pod.gpus < 2 || pod.intent.policy == TopologyPolicy::kNone) return 1.0;
  if (!c.found) return 0.0;
  double s = state.best_ring_mbps == 0 ? 1.0 : double(c.ring_mbps) / state.best_ring_mbps;
  if (!c.meets_min_link) s *= 0.5;
  return std::clamp(s, 0.0, 1.0);
}

double PackingScore::Score(const CycleState& state, const NodeView& node, const Candidate& c) const {
  const int usable = node.usable().size();
  if (usable == 0) return 0.0;
  const int used_after = usable - node.free.size() + state.pod().gpus;
  return std::clamp(double(used_after) / usable, 0.0, 1.0);
}

double FragmentationScore::Score(const CycleState& state, const NodeView& node, const Candidate& c) const {
  if (!node.topology() || !c.found) return 0.0;
  const uint64_t full = state.FullFuture(node);
  if (full == 0) return 1.0;
  const uint64_t loss = c.future_before > c.future_after ? c.future_before - c.future_after : 0;
  return std::clamp(1.0 - double(loss) / double(full), 0.0, 1.0);
}

namespace {

// Free GPUs that still have their node's per-GPU share of CPU and memory beside them (fractional).
// gpus_per_cpu, gpus_per_byte: GPUs per unit of allocatable CPU and memory, 0 when the node has
// none (multiplied here: this runs twice per node of a 5,000-node prioritize, and divisions were
// most of its cost).
double BackedGpus(double gpus, double cpu, double mem, double gpus_per_cpu, double gpus_per_byte) {
  double backed = std::max(0.0, gpus);
  if (gpus_per_cpu > 0) backed = std::min(backed, std::max(0.0, cpu) * gpus_per_cpu);
  if (gpus_per_byte > 0) backed = std::min(backed, std::max(0.0, mem) * gpus_per_byte);
  return backed;
}

}  // namespace

double StrandingScore::Score(const CycleState& state, const NodeView& node, const Candidate& c) const {
  const PodRequest& pod = state.pod();
  const int usable = node.usable().size();
  if (usable == 0 || pod.gpus <= 0) return 0.5;
  const NodeResources& alloc = node.node->allocatable();
  const double gpus_per_cpu = alloc.cpu_milli > 0 ? usable / double(alloc.cpu_milli) : 0.0;
  const double gpus_per_byte = alloc.memory_bytes > 0 ? usable / double(alloc.memory_bytes) : 0.0;
  const double gpus = node.free.size(), cpu = double(node.free_cpu_milli()), mem = double(node.free_memory_bytes());
  const double before = BackedGpus(gpus, cpu, mem, gpus_per_cpu, gpus_per_byte);
  const double after = BackedGpus(gpus - pod.gpus, cpu - double(pod.cpu_milli), mem - double(pod.memory_bytes),
                                  gpus_per_cpu, gpus_per_byte);
  const double waste = before - after - pod.gpus;
  return std::clamp(0.5 - waste / (2.0 * pod.gpus), 0.0, 1.0);
}

}  // namespace topofit::model
