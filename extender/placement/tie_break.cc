#include "extender/placement/tie_break.h"

#include <algorithm>

namespace topofit::placement {

std::string_view ToString(TieBreak rule) {
  switch (rule) {
    case TieBreak::kNone: return "none";
    case TieBreak::kFitThenPack: return "fit-then-pack";
    case TieBreak::kPack: return "pack";
  }
  return "none";
}

std::optional<TieBreak> ParseTieBreak(std::string_view name) {
  for (TieBreak r : {TieBreak::kNone, TieBreak::kFitThenPack, TieBreak::kPack})
    if (ToString(r) == name) return r;
  return std::nullopt;
}

namespace {

// Allocated share after adding `more` to `used`, of `alloc`; nullopt when the node declares none.
std::optional<double> Share(int64_t used, int64_t more, int64_t alloc) {
  if (alloc <= 0) return std::nullopt;
  return double(used + more) / double(alloc);
}

}  // namespace

TieKey TieKeyOf(TieBreak rule, const NodeView& node, const cluster::PodRequest& pod) {
  TieKey key;
  if (rule == TieBreak::kNone) return key;
  const int gpus = std::max(0, pod.gpus);
  const int free_after = std::max(0, node.free.size() - gpus);
  const cluster::NodeResources& alloc = node.node->allocatable();
  double sum = 0;
  int dims = 0;
  for (auto s : {Share(node.node->used_cpu_milli(), pod.cpu_milli, alloc.cpu_milli),
                 Share(node.node->used_memory_bytes(), pod.memory_bytes, alloc.memory_bytes)}) {
    if (!s) continue;
    sum += *s;
    ++dims;
  }
  if (rule == TieBreak::kFitThenPack) {
    key.free_gpus_after = free_after;
    key.share_after = dims ? sum / dims : 0;
    return key;
  }
  const int usable = node.node->usable().size();
  if (usable > 0) {
    sum += double(usable - free_after) / usable;
    ++dims;
  }
  key.share_after = dims ? sum / dims : 0;
  return key;
}

}  // namespace topofit::placement
