#pragma once
// Pipeline: the placement pipeline over a ClusterModel - filter, prioritize, reserve - the very code
// that answers kube-scheduler and that the trace-replay bench runs in-process.
//
//   Filter      pre-checks (no GPU requested: every node passes; invalid annotations / unknown
//               node: unresolvable), then the filter plugins per node (filter_plugins.h).
//   Prioritize  filter again (the model may have moved since), PreScore, the score plugins, and the
//               weighted sum normalised to an integer 0..10 (formula in pipeline_config.h). Nodes
//               failing the filter score 0. Pods asking for no GPU score 0 everywhere (neutral).
//   ReserveBest chooses the exact set with the Placer under the node's lock and reserves it; then
//               Confirm after the API writes, or Release on failure.
// Each distinct node state is filtered and scored once per call (NodeClasses, plugin.h): filters,
// candidates and GPU-only score plugins per distinct GPU state; plugins reading CPU and memory too,
// except on nodes whose CPU and memory differ from the first node of their GPU state.
// Node lists are taken as given (names from the request) and results refer to them by index into
// that list, so the server can answer without copying names.
//
// Thread-safe: every method may run concurrently with each other and with model writers.

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/cluster/cluster_model.h"
#include "extender/placement/band_loss.h"
#include "extender/placement/pipeline_config.h"
#include "extender/placement/placer.h"
#include "extender/placement/product_shortfall.h"
#include "extender/placement/plugin.h"
#include "extender/placement/workload_estimate.h"

namespace topofit::placement {

struct NodeFailure {
  uint32_t index;      // Into the node list given to Filter.
  std::string reason;
};

struct FilterOutcome {
  std::vector<uint32_t> passed;           // Indices, in input order.
  std::vector<NodeFailure> failed;        // Resolvable  -> FailedNodes
  std::vector<NodeFailure> unresolvable;  //             -> FailedAndUnresolvableNodes
};

struct NodeScore {
  uint32_t index;
  int score;  // 0..10
};

struct ScorePart {
  std::string_view plugin;
  double value = 0;   // s_p in [0, 1]
  double weight = 0;
};

// One node's complete evaluation, for Explain and tests.
struct NodeEvaluation {
  std::string_view name;
  FilterStatus status;
  PlacerChoice candidate;           // The set the pod would get (found == false when none).
  int score = 0;                 // 0 when the node fails.
  std::vector<ScorePart> parts;  // Empty when the node fails.
  // Both sides of FragmentationGradient's trade (score_plugins.h), in GPUs; nullopt when it does not
  // run or the node fails. interconnect_gpus is +inf on a slower set under the lexicographic rule.
  struct Trade {
    double fragmentation_gpus = 0;  // frag after - frag before, the model shortfall's change included.
    double interconnect_gpus = 0;   // The price of this node's ring against the best of any node.
  };
  std::optional<Trade> trade;
  // The node's band loss (band_loss.h), in the plugin's units; nullopt when none was asked (no
  // plugin or no opinion, the node not in the best band, or the band a single node).
  std::optional<double> band_loss;
};

class Pipeline {
 public:
  // `model` must outlive the pipeline. `plugins`: the score plugins config.weights chooses from
  // (AllScorePlugins() unless given, in scoring order). Unknown plugin names in config.weights are
  // ignored here; call Validate first to report them.
  explicit Pipeline(cluster::ClusterModel* model, PipelineConfig config = {});
  Pipeline(cluster::ClusterModel* model, PipelineConfig config, std::vector<std::unique_ptr<ScorePlugin>> plugins);
  ~Pipeline();

  // Weights are finite and >= 0 with a positive sum, names are among `plugins` (the built-ins
  // unless given), mix sizes are 1..64.
  static Status Validate(const PipelineConfig& config);
  static Status Validate(const PipelineConfig& config, std::span<const std::unique_ptr<ScorePlugin>> plugins);

  // The filter plugins on each node. With config().filter_keeps_best, the passing nodes are then
  // scored and only those with the best score pass; the others fail (resolvably) with
  // "another node fits better: score S, best B".
  FilterOutcome Filter(const cluster::PodRequest& pod, std::span<const std::string_view> nodes) const;
  FilterOutcome Filter(const cluster::PodRequest& pod, std::span<const std::string> nodes) const;
  std::vector<NodeScore> Prioritize(const cluster::PodRequest& pod, std::span<const std::string_view> nodes) const;
  std::vector<NodeScore> Prioritize(const cluster::PodRequest& pod, std::span<const std::string> nodes) const;
  // As Prioritize, with score_pods_without_gpus given instead of taken from config() (the server's
  // prioritize-pods-without-gpus verb scores GPU-less pods whatever the config says).
  std::vector<NodeScore> Prioritize(const cluster::PodRequest& pod, std::span<const std::string_view> nodes,
                                    bool score_pods_without_gpus) const;
  // Filter, score and candidate of every given node; read-only. A pod without GPUs passes everywhere
  // and is scored as Prioritize scores it with the same score_pods_without_gpus (else 0 everywhere).
  std::vector<NodeEvaluation> Evaluate(const cluster::PodRequest& pod, std::span<const std::string_view> nodes) const;
  std::vector<NodeEvaluation> Evaluate(const cluster::PodRequest& pod, std::span<const std::string_view> nodes,
                                       bool score_pods_without_gpus) const;

  Result<GpuSet> ReserveBest(const cluster::PodRequest& pod, std::string_view node);
  Status Confirm(std::string_view uid) { return model_->Confirm(uid); }
  Status Release(std::string_view uid) { return model_->Release(uid); }

  // Runs the filter plugins on one node as if `free` were its free GPUs (preemption asks "what if").
  FilterStatus FilterNode(const CycleState& state, const NodeView& node) const;
  // Pod-level checks: a non-pass status here applies to every node.
  static FilterStatus PreFilter(const cluster::PodRequest& pod);

  cluster::ClusterModel& model() const { return *model_; }
  // The model-bound demand of `workload` against the cluster's free GPUs now, as FragmentationGradient
  // weighs it (product_shortfall.h), for explain, GET /api/v1/workload and /metrics.
  ProductShortfall Shortfall(const WorkloadSnapshot& workload) const;
  // The running estimate of the GPU pods seen (Filter and Prioritize observe each pod once).
  WorkloadEstimate& workload() const { return workload_; }
  const Placer& placer() const { return placer_; }
  const PipelineConfig& config() const { return config_; }
  // The band loss asked before the tie-break rule (band_loss.h); nullptr (the default): none. Set it
  // before the pipeline serves; `loss` must outlive the pipeline.
  void SetBandLoss(const BandLoss* loss) { band_loss_ = loss; }
  const BandLoss* band_loss() const { return band_loss_; }

 private:
  // A node's 0..10 score from its weighted sum of plugin parts: round(10 x total / sum of weights).
  int ToScore(double total) const;
  // The band losses of the nodes at the given indices (band_loss.h); empty: none asked.
  using BandLosses = std::function<void(std::span<const size_t> band, std::span<double> out)>;
  // Totals (NaN: not passing, score 0) to 0..10, absolute or relative (pipeline_config.h); `key(i)`
  // gives node i's TieKey under config().tie_break, and `losses` the band losses, both asked only
  // for the nodes of the best band.
  void ToLevels(std::span<const double> totals, std::span<int> out, const std::function<TieKey(size_t)>& key,
                const BandLosses& losses) const;
  // Evaluate's scores: PreScore over the passing nodes (views[j] is node passing[j]), then each one's
  // parts and trade into out[passing[j]]; returns the weighted sums.
  std::vector<double> ScoreEach(CycleState& state, std::span<const NodeView> views,
                                std::span<const PlacerChoice> candidates, std::span<const size_t> passing,
                                std::span<NodeEvaluation> out) const;
  // Evaluate's band losses: band_loss_->Losses over the passing nodes (views[j] is node passing[j]),
  // each also recorded in out[passing[j]].band_loss.
  BandLosses RecordedLosses(const cluster::ClusterModel::Reader& reader, const cluster::PodRequest& pod,
                            std::span<const NodeView> views, std::span<const size_t> passing,
                            std::span<NodeEvaluation> out) const;
  // band_loss_->Losses over `nodes` (indexed as ToLevels' totals), with `reader` held.
  BandLosses LossesOf(const cluster::ClusterModel::Reader& reader, const cluster::PodRequest& pod,
                      std::span<const cluster::NodeState* const> nodes) const;
  // filter_keeps_best: keeps the passing nodes of the best score, fails the rest.
  void KeepBest(const cluster::PodRequest& pod, std::span<const std::string_view> nodes, FilterOutcome& out) const;
  // Prioritize's steps. The nodes found in the model, grouped by GPU state (NodeClasses): each
  // node's class and, when some plugin reads CPU and memory, whether it has its class's first node's.
  struct NodeGroups;
  NodeGroups GroupNodes(const cluster::ClusterModel::Reader& reader, std::span<const std::string_view> nodes,
                        const cluster::DraPodAsk* ask) const;
  // Per GPU state (one representative node each): the filters, the candidate, PreScore over the
  // passing ones, and the weighted sum of the plugins that read only GPUs.
  struct ClassScores;
  ClassScores ScoreClasses(CycleState& state, std::span<const NodeView> reps, bool no_gpus) const;
  // The weighted sum for `view` of GPU state c: its class's partial sum plus the plugins reading CPU and memory.
  double TotalOf(const CycleState& state, const NodeView& view, const ClassScores& classes, uint32_t c) const;
  // Every node's weighted sum, NaN for nodes unknown or failing; per class, or per node for nodes
  // whose CPU and memory differ from their class's first node's.
  std::vector<double> NodeTotals(const CycleState& state, std::span<const std::string_view> nodes,
                                 const NodeGroups& groups, const ClassScores& classes) const;
  // The cluster's free GPUs by model for ProductShortfall; null when no workload shape is bound to a model.
  static std::shared_ptr<const cluster::FreeGpus> CountFreeGpus(const cluster::ClusterModel::Reader& reader,
                                                                const WorkloadSnapshot* workload);
  struct Weighted {
    std::unique_ptr<ScorePlugin> plugin;
    double weight;
    bool resources;  // plugin->ReadsResources()
  };
  cluster::ClusterModel* model_;
  PipelineConfig config_;
  Placer placer_;
  mutable WorkloadEstimate workload_;
  std::vector<std::unique_ptr<FilterPlugin>> filters_;
  std::vector<Weighted> scores_;
  double score_scale_ = 0;  // 10 / the sum of the weights.
  bool per_node_ = false;  // Some enabled score plugin reads CPU and memory.
  // config_.interconnect_rate where FragmentationGradient is enabled (it prices the ring), else +inf.
  double interconnect_rate_ = std::numeric_limits<double>::infinity();
  const BandLoss* band_loss_ = nullptr;
};

}  // namespace topofit::placement
