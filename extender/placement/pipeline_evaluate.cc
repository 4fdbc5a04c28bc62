// Pipeline::Evaluate: every given node's verdict, candidate, score parts and score, read-only, for
// Explain and tests; scored as Prioritize scores (pipeline.cc), node by node.
#include "extender/placement/pipeline.h"
#include "extender/placement/score_plugins.h"

namespace topofit::placement {

std::vector<NodeEvaluation> Pipeline::Evaluate(const cluster::PodRequest& pod, std::span<const std::string_view> nodes) const {
  return Evaluate(pod, nodes, config_.score_pods_without_gpus);
}

std::vector<NodeEvaluation> Pipeline::Evaluate(const cluster::PodRequest& pod, std::span<const std::string_view> nodes,
                                               bool score_pods_without_gpus) const {
  std::vector<NodeEvaluation> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) out[i].name = nodes[i];
  const bool no_gpus = !pod.wants_gpus();
  if (no_gpus && !score_pods_without_gpus) return out;  // Passes everywhere, neutral score 0.
  if (FilterStatus pre = PreFilter(pod); !pre.passed()) {
    for (auto& e : out) e.status = pre;
    return out;
  }
  CycleState state(pod, placer_);
  state.workload = workload_.SnapshotWith(pod);  // As prioritize would see it.
  state.interconnect_rate = interconnect_rate_;
  const bool band_loss = band_loss_ && band_loss_->Enabled(pod);  // Before the model's lock.
  auto reader = model_->Read();
  state.free_gpus = CountFreeGpus(reader, state.workload.get());
  std::vector<const cluster::NodeState*> found(nodes.size());
  reader.FindEach(nodes, [&](uint32_t i, const cluster::NodeState* node) { found[i] = node; });
  std::vector<NodeView> views;
  std::vector<PlacerChoice> candidates;
  std::vector<size_t> passing;
  views.reserve(nodes.size());
  candidates.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const cluster::NodeState* node = found[i];
    if (!node) {
      out[i].status = FilterStatus::Unresolvable("unknown node");
      continue;
    }
    NodeView view{nodes[i], node, node->free()};
    if (no_gpus) {
      out[i].candidate.found = true;  // The empty set: the pod takes CPU and memory only (as Prioritize).
    } else {
      out[i].candidate = state.ChoiceFor(view);
      out[i].status = FilterNode(state, view);
      if (!out[i].status.passed()) continue;
    }
    passing.push_back(i);
    views.push_back(view);
    candidates.push_back(out[i].candidate);
  }
  const std::vector<double> totals = ScoreEach(state, views, candidates, passing, out);
  std::vector<int> levels(passing.size(), 0);
  BandLosses losses;
  if (band_loss) losses = RecordedLosses(reader, pod, views, passing, out);
  ToLevels(totals, levels, [&](size_t j) { return TieKeyOf(config_.tie_break, views[j], pod); }, losses);
  for (size_t j = 0; j < passing.size(); ++j) out[passing[j]].score = levels[j];
  return out;
}

std::vector<double> Pipeline::ScoreEach(CycleState& state, std::span<const NodeView> views,
                                        std::span<const PlacerChoice> candidates, std::span<const size_t> passing,
                                        std::span<NodeEvaluation> out) const {
  for (const auto& s : scores_) s.plugin->PreScore(state, views, candidates);
  std::vector<double> totals(passing.size(), 0.0);
  for (size_t j = 0; j < passing.size(); ++j) {
    NodeEvaluation& e = out[passing[j]];
    for (const auto& s : scores_) {
      double v = s.plugin->Score(state, views[j], candidates[j]);
      totals[j] += s.weight * v;
      e.parts.push_back({s.plugin->Name(), v, s.weight});
      if (s.plugin->Name() == "FragmentationGradient") {
        auto [frag, price] = FragmentationGradientScore::Trade(state, views[j], candidates[j]);
        e.trade = NodeEvaluation::Trade{frag, price};
      }
    }
  }
  return totals;
}

Pipeline::BandLosses Pipeline::RecordedLosses(const cluster::ClusterModel::Reader& reader,
                                              const cluster::PodRequest& pod, std::span<const NodeView> views,
                                              std::span<const size_t> passing, std::span<NodeEvaluation> out) const {
  return [this, &reader, &pod, views, passing, out](std::span<const size_t> band, std::span<double> loss) {
    std::vector<const cluster::NodeState*> nodes;
    for (size_t j : band) nodes.push_back(views[j].node);
    band_loss_->Losses(reader, pod, nodes, loss);
    for (size_t j = 0; j < band.size(); ++j) out[passing[band[j]]].band_loss = loss[j];
  };
}

}  // namespace topofit::placement
