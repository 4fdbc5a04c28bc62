#include "extender/model/pipeline.h"

#include <cmath>

#include <fmt/format.h>

#include "extender/model/filter_plugins.h"
#include "extender/model/score_plugins.h"

namespace topofit::model {

namespace {

template <typename S>
std::vector<std::string_view> Views(std::span<const S> names) {
  return std::vector<std::string_view>(names.begin(), names.end());
}

}  // namespace

Pipeline::Pipeline(ClusterModel* model, PipelineConfig config)
    : model_(model), config_(std::move(config)), placer_(config_.mix) {
  filters_.push_back(std::make_unique<GpuCountFilter>());
  filters_.push_back(std::make_unique<TopologyRequirementFilter>());
  for (auto& plugin : AllScorePlugins()) {
    auto it = config_.weights.find(plugin->Name());
    double w = it == config_.weights.end() ? 0.0 : it->second;
    if (!(w > 0) || !std::isfinite(w)) continue;
    weight_sum_ += w;
    scores_.push_back({std::move(plugin), w});
  }
}

Pipeline::~Pipeline() = default;

Status Pipeline::Validate(const PipelineConfig& config) {
  auto plugins = AllScorePlugins();
  double sum = 0;
  for (const auto& [name, w] : config.weights) {
    bool known = false;
    for (const auto& p : plugins) known |= p->Name() == name;
    if (!known) {
      std::string names;
      for (const auto& p : plugins) names += (names.empty() ? "" : ", ") + std::string(p->Name());
      return Error{fmt::format("unknown score plugin '{}' (known: {})", name, names)};
    }
    if (!std::isfinite(w) || w < 0) return Error{fmt::format("weight of {} must be a number >= 0, got {}", name, w)};
    sum += w;
  }
  if (!(sum > 0)) return Error{"score weights must not all be 0"};
  if (config.mix.entries.empty()) return Error{"request mix must not be empty"};
  for (const auto& e : config.mix.entries) {
    if (e.size < 1 || e.size > GpuSet::kMaxGpus) return Error{fmt::format("request mix size {} is not in 1..64", e.size)};
  }
  return Status::Ok();
}

FilterStatus Pipeline::PreFilter(const PodRequest& pod) {
  if (!pod.error.empty()) return FilterStatus::Unresolvable(pod.error);
  return FilterStatus::Pass();
}

FilterStatus Pipeline::FilterNode(const CycleState& state, const NodeView& node) const {
  FilterStatus out;
  for (const auto& f : filters_) {
    FilterStatus s = f->Filter(state, node);
    if (s.code == FilterCode::kUnresolvable) return s;
    if (s.code == FilterCode::kFail) {
      out.code = FilterCode::kFail;
      out.reason += out.reason.empty() ? s.reason : "; " + s.reason;
    }
  }
  return out;
}

FilterOutcome Pipeline::Filter(const PodRequest& pod, std::span<const std::string_view> nodes) const {
  FilterOutcome out;
  if (!pod.wants_gpus()) {
    out.passed.reserve(nodes.size());
    for (uint32_t i = 0; i < nodes.size(); ++i) out.passed.push_back(i);
    return out;
  }
  if (FilterStatus pre = PreFilter(pod); !pre.passed()) {
    for (uint32_t i = 0; i < nodes.size(); ++i) out.unresolvable.push_back({i, pre.reason});
    return out;
  }
  out.passed.reserve(nodes.size());
  CycleState state(pod, placer_);
  // Verdicts depend only on (topology, usable, free) for a given pod: formatting a reason once per
  // distinct state instead of once per node keeps 5,000-node calls cheap when most nodes are full.
  struct Memo {
    bool used = false;
    const Topology* topology = nullptr;
    uint64_t usable = 0, free = 0;
    FilterStatus status;
  };
  constexpr size_t kSlots = 512;
  std::vector<Memo> memo;
  size_t memo_used = 0;
  auto reader = model_->Read();
  std::vector<const NodeState*> found;
  reader.FindAll(nodes, found);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const NodeState* node = found[i];
    if (!node) {
      out.unresolvable.push_back({i, "unknown node"});
      continue;
    }
    NodeView view{nodes[i], node, node->free()};
    FilterStatus s;
    if (view.free.size() >= pod.gpus && pod.intent.policy != TopologyPolicy::kRequired) {
      s = FilterNode(state, view);  // Passes the count check; nothing worth memoising.
    } else {
      if (memo.empty()) memo.resize(kSlots);
      const Topology* t = node->topology();
      const uint64_t u = node->usable().mask(), f = view.free.mask();
      uint64_t h = ((f * 31 + u) ^ reinterpret_cast<uintptr_t>(t)) * 0x9E3779B97F4A7C15ull;
      Memo* slot = nullptr;
      for (size_t j = h >> 55, probes = 0; probes < kSlots; j = (j + 1) & (kSlots - 1), ++probes) {
        Memo& m = memo[j];
        if (!m.used) {
          if (memo_used < kSlots / 2) {
            m = Memo{true, t, u, f, FilterNode(state, view)};
            ++memo_used;
            slot = &m;
          }
          break;
        }
        if (m.topology == t && m.usable == u && m.free == f) {
          slot = &m;
          break;
        }
      }
      s = slot ? slot->status : FilterNode(state, view);
    }
    switch (s.code) {
      case FilterCode::kPass: out.passed.push_back(i); break;
      case FilterCode::kFail: out.failed.push_back({i, std::move(s.reason)}); break;
      case FilterCode::kUnresolvable: out.unresolvable.push_back({i, std::move(s.reason)}); break;
    }
  }
  return out;
}

FilterOutcome Pipeline::Filter(const PodRequest& pod, std::span<const std::string> nodes) const {
  auto views = Views(nodes);
  return Filter(pod, std::span<const std::string_view>(views));
}

std::vector<NodeEvaluation> Pipeline::Evaluate(const PodRequest& pod, std::span<const std::string_view> nodes) const {
  std::vector<NodeEvaluation> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) out[i].name = nodes[i];
  if (!pod.wants_gpus()) return out;  // Passes everywhere, neutral score 0.
  if (FilterStatus pre = PreFilter(pod); !pre.passed()) {
    for (auto& e : out) e.status = pre;
    return out;
  }
  CycleState state(pod, placer_);
  auto reader = model_->Read();
  std::vector<const NodeState*> found;
  reader.FindAll(nodes, found);
  std::vector<NodeView> views;
  std::vector<Candidate> candidates;
  std::vector<size_t> passing;
  views.reserve(nodes.size());
  candidates.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeState* node = found[i];
    if (!node) {
      out[i].status = FilterStatus::Unresolvable("unknown node");
      continue;
    }
    NodeView view{nodes[i], node, node->free()};
    out[i].candidate = state.CandidateFor(view);
    out[i].status = FilterNode(state, view);
    if (!out[i].status.passed()) continue;
    passing.push_back(i);
    views.push_back(view);
    candidates.push_back(out[i].candidate);
  }
  for (const auto& s : scores_) s.plugin->PreScore(state, views, candidates);
  for (size_t j = 0; j < passing.size(); ++j) {
    NodeEvaluation& e = out[passing[j]];
    double total = 0;
    for (const auto& s : scores_) {
      double v = s.plugin->Score(state, views[j], candidates[j]);
      total += s.weight * v;
      e.parts.push_back({s.plugin->Name(), v, s.weight});
    }
    e.score = weight_sum_ > 0 ? static_cast<int>(std::lround(10.0 * total / weight_sum_)) : 0;
    e.score = std::clamp(e.score, 0, 10);
  }
  return out;
}

std::vector<NodeScore> Pipeline::Prioritize(const PodRequest& pod, std::span<const std::string_view> nodes) const {
  std::vector<NodeScore> out;
  out.reserve(nodes.size());
  if (!pod.wants_gpus() || !pod.error.empty()) {
    for (uint32_t i = 0; i < nodes.size(); ++i) out.push_back({i, 0});
    return out;
  }
  CycleState state(pod, placer_, /*reasons=*/false);
  std::vector<NodeView> views;
  std::vector<Candidate> candidates;
  std::vector<uint32_t> passing;
  views.reserve(nodes.size());
  candidates.reserve(nodes.size());
  auto reader = model_->Read();
  std::vector<const NodeState*> found;
  reader.FindAll(nodes, found);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    out.push_back({i, 0});
    const NodeState* node = found[i];
    if (!node) continue;
    NodeView view{nodes[i], node, node->free()};
    if (!FilterNode(state, view).passed()) continue;
    passing.push_back(i);
    views.push_back(view);
    candidates.push_back(state.CandidateFor(view));
  }
  for (const auto& s : scores_) s.plugin->PreScore(state, views, candidates);
  for (size_t j = 0; j < passing.size(); ++j) {
    double total = 0;
    for (const auto& s : scores_) total += s.weight * s.plugin->Score(state, views[j], candidates[j]);
    // total >= 0, so adding 0.5 and truncating rounds like lround (a libm call per node otherwise).
    int score = weight_sum_ > 0 ? static_cast<int>(10.0 * total / weight_sum_ + 0.5) : 0;
    out[passing[j]].score = std::clamp(score, 0, 10);
  }
  return out;
}

std::vector<NodeScore> Pipeline::Prioritize(const PodRequest& pod, std::span<const std::string> nodes) const {
  auto views = Views(nodes);
  return Prioritize(pod, std::span<const std::string_view>(views));
}

Result<GpuSet> Pipeline::ReserveBest(const PodRequest& pod, std::string_view node) {
  if (!pod.wants_gpus()) return Error{"no GPUs requested"};
  if (!pod.error.empty()) return Error{pod.error};
  CycleState state(pod, placer_);
  std::string why;
  auto chooser = [&](const NodeState& n, GpuSet free) -> std::optional<GpuSet> {
    NodeView view{n.name(), &n, free};
    FilterStatus s = FilterNode(state, view);
    if (!s.passed()) {
      why = s.reason;
      return std::nullopt;
    }
    Candidate c = state.CandidateFor(view);
    if (!c.found) {
      why = fmt::format("no set of {} GPUs free", pod.gpus);
      return std::nullopt;
    }
    return c.gpus;
  };
  auto r = model_->Reserve(pod, node, chooser);
  if (!r.ok() && !why.empty()) return Error{why};
  return r;
}

}  // namespace topofit::model
