#pragma once
// PipelineConfig: the tunables of the placement pipeline; the server fills it from --config YAML
// (e.g. `scoring: {weights: {SetQuality: 2, Packing: 1, Fragmentation: 1, Stranding: 2}, requestMix: [...]}`).
//
// Score formula (each score plugin gives s_p in [0, 1]; see score_plugins.h for each s_p):
//
//     score(node) = round( 10 * sum_p w_p * s_p / sum_p w_p )            an integer in 0..10
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
// Default weights: SetQuality 2, Packing 1, Fragmentation 1, Stranding 2 - interconnect first; bin-packing
// and keeping whole NVLink islands free break ties between equally good sets; Stranding as strong as
// SetQuality, because a GPU left without CPU or memory is lost to every pod (measured with
// `topofit bench openb`, README "Trace replay bench").

#include <map>
#include <string>

#include "topology/set_selector.h"

namespace topofit::model {

struct PipelineConfig {
  static std::map<std::string, double, std::less<>> DefaultWeights() {
    return {{"SetQuality", 2.0}, {"Packing", 1.0}, {"Fragmentation", 1.0}, {"Stranding", 2.0}};
  }
  // Score plugin name -> weight (>= 0). A plugin missing here gets weight 0 (disabled).
  std::map<std::string, double, std::less<>> weights = DefaultWeights();
  // The request sizes the cluster expects; drives set choice tie-breaks and Fragmentation.
  RequestMix mix;
  // Filter passes only the nodes with the best score (Pipeline::Filter says what the others get):
  // kube-scheduler then needs no prioritize call, and scores only those nodes itself.
  bool filter_keeps_best = false;
};

}  // namespace topofit::model
