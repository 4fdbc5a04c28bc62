#pragma once
// DomainLoss: the domain half of item 4 for pods of no group - a BandLoss (placement/band_loss.h) that
// keeps a single pod off the free domains the groups topofit expects will need. Among the nodes of
// its best band (tied on the weighted score: often every empty node of the cluster), the pod goes
// where DomainFragmentationScore (domain_fragmentation.h) counts the least loss for one take of its
// GPUs: a 1-GPU pod then opens a node in a rack already broken, not one of the last whole racks an
// expected 18-node group fits.
// Enabled: the pod asks GPUs, is no group member (members are placed by their group's plan), and some
// group shape has been learnt (GroupShapeEstimate, fed by GroupCoordinator's plans). With no shape it
// is never enabled, and a cluster without groups is placed exactly as before.
// Losses: the domain map as of Enabled (DomainMapCache::Peek: a node added since counts 0), the free
// GPUs of every mapped node through the caller's Reader, one PreScore, then ScoreNodes for the band
// (its nodes found by NodeState::slot, not their name; one ScoreNode per block and free count). The
// PreScore is kept while no node and no shape changed (ClusterModel::node_generation), so a pod's
// filter and prioritize read the cluster once between two node changes; when GPUs changed it is
// brought up to date by the nodes that changed (ClusterModel::free_changes, then
// DomainFragmentationScore::SetFree), or by every node when the model no longer knows which.
// Cost per enabled call: the band's nodes once; plus, when a node or a shape changed, every mapped
// node once per expected shape, or, when only GPUs changed, each changed node once per shape. Not
// errors: a band node outside the map (loss 0). Thread-safe: calls share the PreScore, and one that
// brings it up to date waits for those scoring on it.

#include <memory>
#include <mutex>

#include "extender/groups/domain_map_cache.h"
#include "extender/groups/group_lookup.h"
#include "extender/groups/group_shapes.h"
#include "extender/placement/band_loss.h"

namespace topofit::groups {

class DomainLoss : public placement::BandLoss {
 public:
  // All three must outlive this.
  DomainLoss(const DomainMapCache& maps, const GroupLookup& lookup, const GroupShapeEstimate& expected);
  ~DomainLoss() override;

  // Up to date by the nodes that changed when only GPUs changed (the default), or read afresh: the same
  // losses either way (domain_loss_test.cc); off is for the perftest's comparison.
  void set_incremental(bool on) { incremental_ = on; }
  // The band scored once per class of nodes alike and free count (the default), or node by node: the
  // same losses either way (domain_fragmentation_test.cc); off is for the perftest's comparison.
  void set_by_class(bool on) { by_class_ = on; }

  std::string_view Name() const override { return "DomainFragmentation"; }
  bool Enabled(const cluster::PodRequest& pod) const override;
  void Losses(const cluster::ClusterModel::Reader& reader, const cluster::PodRequest& pod,
              std::span<const cluster::NodeState* const> nodes, std::span<double> out) const override;

 private:
  struct Prepared;
  // The PreScore of the nodes now: the last one while no node and no shape changed (ClusterModel's
  // node generation), else read again through `reader` (also when only GPUs changed, with
  // set_incremental(false)); nullptr when nothing is expected. `gpus`: the GPU generation, read first.
  std::shared_ptr<Prepared> PreparedNow(const cluster::ClusterModel::Reader& reader, uint64_t gpus) const;
  // Every mapped node read through `reader`, and PreScore.
  std::shared_ptr<Prepared> Read(const cluster::ClusterModel::Reader& reader,
                                 const std::shared_ptr<const DomainMap>& map,
                                 const std::shared_ptr<const GroupShapeSnapshot>& shapes, uint64_t gpus,
                                 uint64_t nodes) const;
  // p with each changed node's free GPUs as they are now (SetFree), up to generation `gpus`.
  void BringUpToDate(Prepared& p, uint64_t gpus) const;
  // The node's index in p's map (by its slot), or -1.
  static int IndexOf(const Prepared& p, const cluster::NodeState* node);
  const DomainMapCache& maps_;
  const GroupLookup& lookup_;
  const GroupShapeEstimate& expected_;
  bool incremental_ = true;
  bool by_class_ = true;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Prepared> prepared_;
};

}  // namespace topofit::groups
