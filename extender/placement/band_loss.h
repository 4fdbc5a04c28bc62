#pragma once
// BandLoss: an extension point for a cost placement/ cannot see - what placing a pod on each node of
// its best band (the nodes tied on the weighted score, tie_break.h) costs the cluster beyond the node.
// It is asked before the tie-break rule: only the band's nodes of least loss (within 1e-9) keep 10,
// and the rule orders those. groups/ plugs in the domain loss (groups/domain_loss.h): the room the
// groups topofit expects lose at every network level. Without one, or with every loss 0, the band is
// ordered exactly as the rule alone orders it.
//   Name()          what explain calls the loss.
//   Enabled(pod)    asked once per call, before the model is read and without any of its locks (it
//                   may refresh its own views); false: no opinion, and Losses is not asked.
//   Losses          asked with the model's Reader held (read the model through it only, never
//                   through another ClusterModel method): out[i] >= 0, the loss of placing `pod` on
//                   nodes[i], a node found through that Reader on which the pod has a set; lower first.
// Thread-safe: concurrent filters, prioritizes and explains call it.

#include <span>
#include <string_view>

#include "extender/cluster/cluster_model.h"

namespace topofit::placement {

class BandLoss {
 public:
  virtual ~BandLoss() = default;
  virtual std::string_view Name() const = 0;
  virtual bool Enabled(const cluster::PodRequest& pod) const = 0;
  virtual void Losses(const cluster::ClusterModel::Reader& reader, const cluster::PodRequest& pod,
                      std::span<const cluster::NodeState* const> nodes, std::span<double> out) const = 0;
};

}  // namespace topofit::placement
