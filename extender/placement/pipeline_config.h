#pragma once
// PipelineConfig: the tunables of the placement pipeline; the server fills it from --config YAML
// (e.g. `scoring: {weights: {SetQuality: 1, FragmentationGradient: 1}, levels: relative, requestMix: [...]}`).
//
// Score formula (each score plugin gives s_p in [0, 1]; see score_plugins.h for each s_p): the node's
// weighted sum sum_p w_p * s_p, made an integer 0..10 by `relative_levels` below (default: the nodes
// of the best sum that `tie_break` ranks first get 10, every other node at most 5) or absolutely as
// round(10 * sum_p w_p s_p / sum_p w_p).
//
//   SetQuality    s = ring(set on node) / max over the request's nodes of ring(set there);
//                 1 for 1-GPU pods and policy none; halved when the set misses a best-effort min-link.
//   Packing       s = (GPUs in use on the node after placing the pod) / usable GPUs.
//   Fragmentation s = 1 - (Future(free) - Future(free - set)) / Future(all usable GPUs),
//                 Future = SetSelector::FutureScore over `mix`: the share of the node's whole-node
//                 potential that this placement destroys, subtracted from 1.
//   Stranding     s = 0.5 - waste / (2k), clamped to [0, 1]; waste = GPUs still backed by their node's
//                 per-GPU share of CPU and memory before the pod, minus after, minus the k it takes
//                 (score_plugins.h): free GPUs must keep CPU and memory beside them to stay usable.
//   FragmentationGradient  s = 0.5 - (frag after - frag before + price) / (2 (G + R k)): the expected
//                 free GPUs a pod of the workload estimate could not use, the FGD rule, plus the price
//                 of the node's ring for a multi-GPU pod, R k (1 - ring here / best ring of any node)
//                 GPUs, R = interconnect_rate below (score_plugins.h). With R = +inf it is 0 on a node
//                 whose set is slower than the best and SetQuality + FragmentationGradient is
//                 lexicographic: best set first, then least fragmentation; with R finite SetQuality
//                 only keeps a best-effort pod's min-link (1, 0.5 when missed) and the trade is R's.
// Default weights: SetQuality 1, FragmentationGradient 1. Packing, Fragmentation and Stranding remain
// for configurations that name them; FragmentationGradient subsumes them (docs/placement.md).

#include <map>
#include <string>

#include "extender/placement/tie_break.h"
#include "extender/placement/workload_estimate.h"
#include "topology/set_selector.h"

namespace topofit::placement {

struct PipelineConfig {
  static std::map<std::string, double, std::less<>> DefaultWeights() {
    return {{"SetQuality", 1.0}, {"FragmentationGradient", 1.0}};
  }
  // Score plugin name -> weight (>= 0). A plugin missing here gets weight 0 (disabled).
  std::map<std::string, double, std::less<>> weights = DefaultWeights();
  // The request sizes the cluster expects; drives set choice tie-breaks and Fragmentation.
  RequestMix mix;
  // Filter passes only the nodes with the best score (Pipeline::Filter says what the others get):
  // kube-scheduler then needs no prioritize call, and scores only those nodes itself.
  bool filter_keeps_best = false;
  // How the weighted sum becomes kube-scheduler's 0..10 (`scoring: {levels: relative|absolute}`):
  //   absolute  round(10 * sum_p w_p s_p / sum_p w_p)
  //   relative  the nodes of the best sum (within 1e-9) that `tie_break` ranks first get 10; every
  //             other node round(kBelowBest * (sum - lowest) / (best - lowest)), at most kBelowBest = 5:
  //             with the extender weight 5 (manifests/), 10 levels x 5 x 10 = 500 stays above any
  //             other node's 5 x 5 x 10 + 200, the most kube-scheduler's in-tree NodeResourcesFit and
  //             BalancedAllocation add, so the node kube-scheduler binds is always of topofit's best
  //             band and first under its tie-break, and the in-tree scores choose only among nodes
  //             topofit rates equal.
  bool relative_levels = true;
  // Relative levels only: which nodes of the best band get the 10 (`scoring: {tieBreak: ...}`,
  // tie_break.h). Under a rule other than none, the band's nodes that the rule ranks below its first
  // get kBelowBest, so the in-tree scores choose only among the rule's exact ties.
  TieBreak tie_break = TieBreak::kFitThenPack;
  // Prioritize scores pods that ask for no GPU too (`scoring: {podsWithoutGpus: true}`): every node
  // passes, the set is empty, and FragmentationGradient puts the pod where its CPU and memory leave
  // the fewest free GPUs unusable. Only useful when kube-scheduler sends such pods to the extender (an
  // extender entry without managedResources, in the profile those pods use); off by default.
  bool score_pods_without_gpus = false;
  // The exchange rate between ring bandwidth and fragmentation (`scoring.interconnectRate`), in GPUs
  // per GPU of the pod: a k-GPU pod whose set on a node has x times the best ring any node offers it
  // is charged R k (1 - x) GPUs, the GPUs' worth of work it would lose if its speed were proportional
  // to its ring bandwidth (R = 1) or to part of it (R < 1), against the GPUs the placement makes
  // unusable (frag). 0: fragmentation alone decides (the pod still gets the best set of the node it
  // lands on); +inf (`.inf`): best ring of the cluster first, then fragmentation. Chosen by the
  // procedure of docs/placement.md ("The exchange rate").
  double interconnect_rate = DefaultInterconnectRate();
  static double DefaultInterconnectRate();  // score_plugins.cc, beside the plugin that uses it.
  // The running workload estimate that FragmentationGradient takes its expectation over.
  WorkloadOptions workload;
};

}  // namespace topofit::placement
