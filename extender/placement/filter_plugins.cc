#include "extender/placement/filter_plugins.h"

#include <fmt/format.h>

namespace topofit::placement {

namespace {

std::string Gpus(int k) { return k == 1 ? "1 GPU" : fmt::format("{} GPUs", k); }

std::string FreeList(GpuSet free) {
  if (free.empty()) return "0 free";
  return fmt::format("{} free ({} {})", free.size(), free.size() == 1 ? "GPU" : "GPUs", free.ToString());
}

// On a node whose GPUs are time-sliced or shared by MPS, a pod that does not pack its replicas
// needs k distinct GPUs, each with a free replica.
FilterStatus DistinctGpus(const CycleState& state, const NodeView& node, int k) {
  const cluster::SharedDevices& s = node.node->spec().shared;
  if (!s.shared() || s.mig() || state.pod().intent.packed_replicas || k < 2) return FilterStatus::Pass();
  const GpuSet gpus = s.GpusOf(node.usable()), with_free = s.GpusOf(node.free);
  if (k > gpus.size()) {
    if (!state.wants_reasons()) return {FilterCode::kUnresolvable, {}};
    return FilterStatus::Unresolvable(fmt::format("{} requested on distinct GPUs, node has {} ({} replicas each)", Gpus(k),
                                                  gpus.size(), s.per_gpu));
  }
  if (k <= with_free.size()) return FilterStatus::Pass();
  if (!state.wants_reasons()) return {FilterCode::kFail, {}};
  return FilterStatus::Fail(fmt::format("{} requested on distinct GPUs, {} with a free replica{}", Gpus(k),
                                        Gpus(with_free.size()),
                                        with_free.empty() ? "" : fmt::format(" ({})", with_free.ToString())));
}

}  // namespace

std::string SetPhrase(int k, LinkClass min_link) {
  if (min_link == LinkClass::Nv) return fmt::format("NVLink-connected set of {}", k);
  return fmt::format("set of {} linked at {} or better", k, ToString(min_link));
}

FilterStatus GpuCountFilter::Filter(const CycleState& state, const NodeView& node) const {
  const int k = state.pod().gpus;
  const GpuSet usable = node.usable();
  if (!state.wants_reasons()) {
    if (usable.empty() || k > usable.size()) return {FilterCode::kUnresolvable, {}};
    return k > node.free.size() ? FilterStatus{FilterCode::kFail, {}} : DistinctGpus(state, node, k);
  }
  if (usable.empty()) return FilterStatus::Unresolvable(fmt::format("{} requested, node has none", Gpus(k)));
  if (k > usable.size()) return FilterStatus::Unresolvable(fmt::format("{} requested, node has {}", Gpus(k), usable.size()));
  if (k > node.free.size()) return FilterStatus::Fail(fmt::format("{} requested, {}", Gpus(k), FreeList(node.free)));
  return DistinctGpus(state, node, k);
}

FilterStatus TopologyRequirementFilter::Filter(const CycleState& state, const NodeView& node) const {
  const cluster::PodRequest& pod = state.pod();
  if (pod.intent.policy != cluster::TopologyPolicy::kRequired || pod.gpus < 2 || !node.topology()) return FilterStatus::Pass();
  const LinkClass min = *pod.intent.EffectiveMinLink();
  if (!state.ChoiceFor(node, node.usable()).found) {
    if (!state.wants_reasons()) return {FilterCode::kUnresolvable, {}};
    return FilterStatus::Unresolvable(fmt::format("required: no {} on this node", SetPhrase(pod.gpus, min)));
  }
  if (!state.ChoiceFor(node).found) {
    if (!state.wants_reasons()) return {FilterCode::kFail, {}};
    return FilterStatus::Fail(fmt::format("no {} free", SetPhrase(pod.gpus, min)));
  }
  return FilterStatus::Pass();
}

}  // namespace topofit::placement

namespace topofit::placement {

std::string_view ToString(FilterCode code) {
  switch (code) {
    case FilterCode::kPass: return "pass";
    case FilterCode::kFail: return "fail";
    case FilterCode::kUnresolvable: return "unresolvable";
  }
  return "?";
}

}  // namespace topofit::placement
