#include "extender/model/pipeline.h"

#include <cmath>

#include <fmt/format.h>

#include "extender/model/filter_plugins.h"
#include "extender/model/node_classes.h"
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
  auto reader = model_->Read();
  std::vector<const NodeState*> found;
  reader.FindAll(nodes, found);
  // Verdicts depend only on a node's GPU state (plugin.h): each distinct state is filtered once,
  // and its reason formatted once, however many of the 5,000 nodes share it.
  NodeClasses classes(nodes.size(), /*resources=*/false);
  std::vector<FilterStatus> verdicts;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const NodeState* node = found[i];
    if (!node) {
      out.unresolvable.push_back({i, "unknown node"});
      continue;
    }
    const uint32_t c = classes.Classify(NodeView{nodes[i], node, node->free()});
    if (c == verdicts.size()) verdicts.push_back(FilterNode(state, classes.views()[c]));
    const FilterStatus& s = verdicts[c];
    switch (s.code) {
      case FilterCode::kPass: out.passed.push_back(i); break;
      case FilterCode::kFail: out.failed.push_back({i, s.reason}); break;
      case FilterCode::kUnresolvable: out.unresolvable.push_back({i, s.reason}); break;
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
  auto reader = model_->Read();
  std::vector<const NodeState*> found;
  reader.FindAll(nodes, found);
  // Filter and score each distinct state once (plugin.h); every node takes its class's score.
  constexpr uint32_t kUnknown = UINT32_MAX;
  NodeClasses classes(nodes.size(), /*resources=*/true);
  std::vector<uint32_t> class_of(nodes.size(), kUnknown);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (const NodeState* node = found[i]) class_of[i] = classes.Classify(NodeView{nodes[i], node, node->free()});
  }
  const std::vector<int> class_scores = ScoreEach(state, classes.views());
  for (uint32_t i = 0; i < nodes.size(); ++i) out.push_back({i, class_of[i] == kUnknown ? 0 : class_scores[class_of[i]]});
  return out;
}

std::vector<int> Pipeline::ScoreEach(CycleState& state, std::span<const NodeView> nodes) const {
  std::vector<int> out(nodes.size(), 0);
  std::vector<NodeView> views;
  std::vector<Candidate> candidates;
  std::vector<uint32_t> passing;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (!FilterNode(state, nodes[i]).passed()) continue;
    passing.push_back(i);
    views.push_back(nodes[i]);
    candidates.push_back(state.CandidateFor(nodes[i]));
  }
  for (const auto& s : scores_) s.plugin->PreScore(state, views, candidates);
  for (size_t j = 0; j < passing.size(); ++j) {
    double total = 0;
    for (const auto& s : scores_) total += s.weight * s.plugin->Score(state, views[j], candidates[j]);
    // total >= 0, so adding 0.5 and truncating rounds like lround (a libm call per node otherwise).
    int score = weight_sum_ > 0 ? static_cast<int>(10.0 * total / weight_sum_ + 0.5) : 0;
    out[passing[j]] = std::clamp(score, 0, 10);
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
