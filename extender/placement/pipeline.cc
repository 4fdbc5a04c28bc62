#include "extender/placement/pipeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "extender/placement/filter_plugins.h"
#include "extender/placement/node_classes.h"
#include "extender/placement/score_plugins.h"

namespace topofit::placement {

namespace {

template <typename S>
std::vector<std::string_view> Views(std::span<const S> names) {
  return std::vector<std::string_view>(names.begin(), names.end());
}

}  // namespace

// Every node of the model, not only those of the request (kube-scheduler may send a sample); null
// when no shape is bound to a model, so that clusters without such pods pay nothing for it.
std::shared_ptr<const cluster::FreeGpus> Pipeline::CountFreeGpus(const cluster::ClusterModel::Reader& reader,
                                                                 const WorkloadSnapshot* workload) {
  if (!workload || !ProductShortfall::AnyBound(workload->shapes)) return nullptr;
  return std::make_shared<cluster::FreeGpus>(reader.FreeByProduct());
}

Pipeline::Pipeline(cluster::ClusterModel* model, PipelineConfig config)
    : Pipeline(model, std::move(config), AllScorePlugins()) {}

Pipeline::Pipeline(cluster::ClusterModel* model, PipelineConfig config, std::vector<std::unique_ptr<ScorePlugin>> plugins)
    : model_(model), config_(std::move(config)), placer_(config_.mix), workload_(config_.workload) {
  filters_.push_back(std::make_unique<GpuCountFilter>());
  filters_.push_back(std::make_unique<TopologyRequirementFilter>());
  double weight_sum = 0;
  for (auto& plugin : plugins) {
    auto it = config_.weights.find(plugin->Name());
    double w = it == config_.weights.end() ? 0.0 : it->second;
    if (!(w > 0) || !std::isfinite(w)) continue;
    weight_sum += w;
    const bool resources = plugin->ReadsResources();
    per_node_ |= resources;
    if (plugin->Name() == "FragmentationGradient") interconnect_rate_ = config_.interconnect_rate;
    scores_.push_back({std::move(plugin), w, resources});
  }
  score_scale_ = weight_sum > 0 ? 10.0 / weight_sum : 0.0;
}

int Pipeline::ToScore(double total) const {
  // total >= 0 (weights > 0, parts in [0, 1]), so adding 0.5 and truncating rounds half up, as
  // lround would, without a libm call per node; Evaluate and Prioritize round alike.
  return std::clamp(static_cast<int>(total * score_scale_ + 0.5), 0, 10);
}

void Pipeline::ToLevels(std::span<const double> totals, std::span<int> out,
                        const std::function<TieKey(size_t)>& key, const BandLosses& losses) const {
  if (!config_.relative_levels) {
    for (size_t i = 0; i < totals.size(); ++i) out[i] = std::isnan(totals[i]) ? 0 : ToScore(totals[i]);
    return;
  }
  constexpr int kBelowBest = 5;
  constexpr double kTie = 1e-9;
  double best = -1, lowest = 1e300;
  for (double t : totals) {
    if (std::isnan(t)) continue;
    best = std::max(best, t);
    lowest = std::min(lowest, t);
  }
  const double span = best - lowest;
  for (size_t i = 0; i < totals.size(); ++i) {
    const double t = totals[i];
    if (std::isnan(t)) out[i] = 0;
    else if (t >= best - kTie) out[i] = 10;
    else out[i] = std::clamp(static_cast<int>(kBelowBest * (t - lowest) / span + 0.5), 0, kBelowBest);
  }
  if (config_.tie_break == TieBreak::kNone && !losses) return;
  // The band: the first by band loss, then by the rule, keep 10; the others drop to kBelowBest (tie_break.h).
  std::vector<size_t> band;
  band.reserve(totals.size());  // Often most of the nodes (a 1-GPU pod's band): grown once, not doubled.
  for (size_t i = 0; i < totals.size(); ++i)
    if (out[i] == 10) band.push_back(i);
  if (band.size() < 2) return;
  std::vector<TieKey> keys(band.size());
  for (size_t j = 0; j < band.size(); ++j) keys[j] = key(band[j]);
  if (losses) {
    std::vector<double> loss(band.size(), 0.0);
    losses(band, loss);
    for (size_t j = 0; j < band.size(); ++j) keys[j].band_loss = loss[j];
  }
  size_t first_at = 0;  // The first by the rule: an index chosen without a branch.
  for (size_t j = 1; j < keys.size(); ++j) first_at = TieKey::Better(keys[j], keys[first_at]) ? j : first_at;
  const TieKey first = keys[first_at];
  for (size_t j = 0; j < band.size(); ++j) out[band[j]] = TieKey::Tied(keys[j], first) ? 10 : kBelowBest;
}

Pipeline::~Pipeline() = default;

Pipeline::BandLosses Pipeline::LossesOf(const cluster::ClusterModel::Reader& reader, const cluster::PodRequest& pod,
                                        std::span<const cluster::NodeState* const> nodes) const {
  return [this, &reader, &pod, nodes](std::span<const size_t> band, std::span<double> out) {
    std::vector<const cluster::NodeState*> found;
    found.reserve(band.size());
    for (size_t i : band) found.push_back(nodes[i]);
    band_loss_->Losses(reader, pod, found, out);
  };
}

Status Pipeline::Validate(const PipelineConfig& config) { return Validate(config, AllScorePlugins()); }

Status Pipeline::Validate(const PipelineConfig& config, std::span<const std::unique_ptr<ScorePlugin>> plugins) {
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

FilterStatus Pipeline::PreFilter(const cluster::PodRequest& pod) {
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

FilterOutcome Pipeline::Filter(const cluster::PodRequest& pod, std::span<const std::string_view> nodes) const {
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
  workload_.Observe(pod);
  CycleState state(pod, placer_);
  // Verdicts depend only on a node's GPU state (plugin.h): each distinct state is filtered once,
  // and its reason formatted once, however many of the 5,000 nodes share it.
  NodeClasses classes(nodes.size(), pod.dra_ask.get());
  std::vector<FilterStatus> verdicts;
  model_->Read().FindEach(nodes, [&](uint32_t i, const cluster::NodeState* node) {
    if (!node) {
      out.unresolvable.push_back({i, "unknown node"});
      return;
    }
    const uint32_t c = classes.Classify(NodeView{nodes[i], node, node->free()});
    if (c == verdicts.size()) verdicts.push_back(FilterNode(state, classes.views()[c]));
    const FilterStatus& s = verdicts[c];
    switch (s.code) {
      case FilterCode::kPass: out.passed.push_back(i); break;
      case FilterCode::kFail: out.failed.push_back({i, s.reason}); break;
      case FilterCode::kUnresolvable: out.unresolvable.push_back({i, s.reason}); break;
    }
  });
  if (config_.filter_keeps_best && out.passed.size() > 1) KeepBest(pod, nodes, out);
  return out;
}

void Pipeline::KeepBest(const cluster::PodRequest& pod, std::span<const std::string_view> nodes, FilterOutcome& out) const {
  std::vector<std::string_view> passed_names;
  passed_names.reserve(out.passed.size());
  for (uint32_t i : out.passed) passed_names.push_back(nodes[i]);
  const std::vector<NodeScore> scores = Prioritize(pod, std::span<const std::string_view>(passed_names));
  int best = -1;
  for (const NodeScore& s : scores) best = std::max(best, s.score);
  std::vector<uint32_t> kept;
  std::string reasons[11];  // One formatted reason per score below the best.
  for (const NodeScore& s : scores) {
    const uint32_t i = out.passed[s.index];
    if (s.score == best) {
      kept.push_back(i);
      continue;
    }
    std::string& reason = reasons[std::clamp(s.score, 0, 10)];
    if (reason.empty()) reason = fmt::format("another node fits better: score {}, best {}", s.score, best);
    out.failed.push_back({i, reason});
  }
  std::sort(kept.begin(), kept.end());
  out.passed = std::move(kept);
}

ProductShortfall Pipeline::Shortfall(const WorkloadSnapshot& workload) const {
  auto reader = model_->Read();  // The node types' topologies stay alive while it lives.
  return ProductShortfall(workload.shapes, reader.FreeByProduct(), placer_);
}

FilterOutcome Pipeline::Filter(const cluster::PodRequest& pod, std::span<const std::string> nodes) const {
  auto views = Views(nodes);
  return Filter(pod, std::span<const std::string_view>(views));
}

std::vector<NodeScore> Pipeline::Prioritize(const cluster::PodRequest& pod, std::span<const std::string_view> nodes) const {
  return Prioritize(pod, nodes, config_.score_pods_without_gpus);
}

struct Pipeline::NodeGroups {
  static constexpr uint32_t kUnknown = UINT32_MAX;
  NodeGroups(size_t n, const cluster::DraPodAsk* ask) : classes(n, ask), class_of(n, kUnknown), found(n), like_class(n, 0) {}
  NodeClasses classes;
  std::vector<uint32_t> class_of;                // Index into classes.views(); kUnknown: not in the model.
  std::vector<const cluster::NodeState*> found;  // nullptr: not in the model.
  std::vector<uint8_t> like_class;               // CPU and memory as the class's first node (per_node_ only).
};

struct Pipeline::ClassScores {
  std::vector<uint8_t> passed;        // The GPU state passes the filters.
  std::vector<PlacerChoice> candidates;  // The pod's set there.
  std::vector<double> partial;        // The weighted sum of the plugins that read only GPUs.
};

std::vector<NodeScore> Pipeline::Prioritize(const cluster::PodRequest& pod, std::span<const std::string_view> nodes,
                                            bool score_pods_without_gpus) const {
  std::vector<NodeScore> out;
  out.reserve(nodes.size());
  // A pod without GPUs takes no set: with score_pods_without_gpus it is scored where its CPU and
  // memory cost the GPU workload least (FragmentationGradient), every node passing; else 0 everywhere.
  const bool no_gpus = !pod.wants_gpus();
  if ((no_gpus && !score_pods_without_gpus) || !pod.error.empty()) {
    for (uint32_t i = 0; i < nodes.size(); ++i) out.push_back({i, 0});
    return out;
  }
  workload_.Observe(pod);
  CycleState state(pod, placer_, /*reasons=*/false);
  state.workload = workload_.Snapshot();
  state.interconnect_rate = interconnect_rate_;
  // The filters, the candidate set and the score plugins that read only GPUs run once per distinct
  // GPU state (plugin.h) - a few hundred at most, even in a busy cluster. Plugins that read CPU and
  // memory run once per GPU state too for the nodes whose CPU and memory equal the first node's of
  // that state (an idle cluster: all of them), and per node for the rest (a busy cluster: nearly
  // all; grouping those by full state cost more than the arithmetic it saved).
  const bool band_loss = band_loss_ && band_loss_->Enabled(pod);  // Before the model's lock.
  auto reader = model_->Read();  // Held while scoring: the nodes must stay alive.
  state.free_gpus = CountFreeGpus(reader, state.workload.get());
  const NodeGroups groups = GroupNodes(reader, nodes, pod.dra_ask.get());
  const ClassScores classes = ScoreClasses(state, groups.classes.views(), no_gpus);
  const std::vector<double> totals = NodeTotals(state, nodes, groups, classes);
  std::vector<int> levels(nodes.size(), 0);
  BandLosses losses;
  if (band_loss) losses = LossesOf(reader, pod, groups.found);
  ToLevels(totals, levels, [&](size_t i) {
    const GpuSet free = groups.classes.views()[groups.class_of[i]].free;  // As classified.
    return TieKeyOf(config_.tie_break, NodeView{nodes[i], groups.found[i], free}, pod);
  }, losses);
  for (uint32_t i = 0; i < nodes.size(); ++i) out.push_back({i, levels[i]});
  return out;
}

Pipeline::NodeGroups Pipeline::GroupNodes(const cluster::ClusterModel::Reader& reader,
                                          std::span<const std::string_view> nodes,
                                          const cluster::DraPodAsk* ask) const {
  NodeGroups groups(nodes.size(), ask);
  std::vector<ResourceKey> class_resources;
  reader.FindEach(nodes, [&](uint32_t i, const cluster::NodeState* node) {
    groups.found[i] = node;
    if (!node) return;
    const uint32_t c = groups.classes.Classify(NodeView{nodes[i], node, node->free()});
    groups.class_of[i] = c;
    if (!per_node_) return;
    const ResourceKey r = ResourceKey::Of(*node);  // Read while the node is in cache.
    if (c == class_resources.size()) class_resources.push_back(r);
    groups.like_class[i] = r == class_resources[c];
  });
  return groups;
}

Pipeline::ClassScores Pipeline::ScoreClasses(CycleState& state, std::span<const NodeView> reps, bool no_gpus) const {
  ClassScores out{std::vector<uint8_t>(reps.size(), 0), std::vector<PlacerChoice>(reps.size()),
                  std::vector<double>(reps.size(), 0.0)};
  std::vector<NodeView> passing_views;
  std::vector<PlacerChoice> passing_candidates;
  for (uint32_t c = 0; c < reps.size(); ++c) {
    if (no_gpus) {
      out.candidates[c].found = true;  // The empty set: the pod takes CPU and memory only.
    } else {
      if (!FilterNode(state, reps[c]).passed()) continue;
      out.candidates[c] = state.ChoiceFor(reps[c]);
    }
    out.passed[c] = 1;
    passing_views.push_back(reps[c]);
    passing_candidates.push_back(out.candidates[c]);
  }
  for (const auto& s : scores_) s.plugin->PreScore(state, passing_views, passing_candidates);
  for (const auto& s : scores_) {
    if (s.resources) continue;
    for (uint32_t c = 0; c < reps.size(); ++c)
      if (out.passed[c]) out.partial[c] += s.weight * s.plugin->Score(state, reps[c], out.candidates[c]);
  }
  return out;
}

double Pipeline::TotalOf(const CycleState& state, const NodeView& view, const ClassScores& classes, uint32_t c) const {
  double total = classes.partial[c];
  for (const auto& s : scores_)
    if (s.resources) total += s.weight * s.plugin->Score(state, view, classes.candidates[c]);
  return total;
}

std::vector<double> Pipeline::NodeTotals(const CycleState& state, std::span<const std::string_view> nodes,
                                         const NodeGroups& groups, const ClassScores& classes) const {
  const std::span<const NodeView> reps = groups.classes.views();
  constexpr double kFails = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> class_totals(reps.size(), kFails);
  for (uint32_t c = 0; c < reps.size(); ++c)
    if (classes.passed[c]) class_totals[c] = TotalOf(state, reps[c], classes, c);
  std::vector<double> totals;
  totals.reserve(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    constexpr uint32_t kAhead = 16;  // Nodes scored alone left the cache since FindEach.
    if (per_node_ && i + kAhead < nodes.size() && !groups.like_class[i + kAhead] && groups.found[i + kAhead]) {
      __builtin_prefetch(groups.found[i + kAhead]);
      __builtin_prefetch(reinterpret_cast<const char*>(groups.found[i + kAhead]) + 64);
    }
    const uint32_t c = groups.class_of[i];
    if (c == NodeGroups::kUnknown || !classes.passed[c]) totals.push_back(kFails);
    else if (groups.like_class[i] || !per_node_) totals.push_back(class_totals[c]);
    else totals.push_back(TotalOf(state, NodeView{nodes[i], groups.found[i], reps[c].free}, classes, c));  // Free as classified.
  }
  return totals;
}

std::vector<NodeScore> Pipeline::Prioritize(const cluster::PodRequest& pod, std::span<const std::string> nodes) const {
  auto views = Views(nodes);
  return Prioritize(pod, std::span<const std::string_view>(views));
}

Result<GpuSet> Pipeline::ReserveBest(const cluster::PodRequest& pod, std::string_view node) {
  if (!pod.wants_gpus()) return Error{"no GPUs requested"};
  if (!pod.error.empty()) return Error{pod.error};
  CycleState state(pod, placer_);
  std::string why;
  auto chooser = [&](const cluster::NodeState& n, GpuSet free) -> std::optional<GpuSet> {
    NodeView view{n.name(), &n, free};
    FilterStatus s = FilterNode(state, view);
    if (!s.passed()) {
      why = s.reason;
      return std::nullopt;
    }
    PlacerChoice c = state.ChoiceFor(view);
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

}  // namespace topofit::placement
