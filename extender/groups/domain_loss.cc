#include "extender/groups/domain_loss.h"

#include <algorithm>
#include <shared_mutex>

#include "extender/groups/domain_fragmentation.h"
#include "extender/groups/group_nodes.h"

namespace topofit::groups {

// What every band's losses are read from while neither the nodes nor the shapes change: the score's
// PreScore over every mapped node, brought up to date in place as their free GPUs change (under mu),
// and where each node is in the map.
struct DomainLoss::Prepared {
  std::shared_ptr<const DomainMap> map;
  std::shared_ptr<const GroupShapeSnapshot> shapes;
  uint64_t node_generation = 0;
  // Per NodeState::slot: the node there when read, and its map index (-1: none) - one load per band node.
  struct SlotEntry {
    const cluster::NodeState* node = nullptr;
    int index = -1;
  };
  std::vector<SlotEntry> by_slot;
  std::vector<const cluster::NodeState*> of;   // Per map index: the node (nullptr: not in the model).
  std::shared_mutex mu;  // Shared: ScoreNodes; exclusive: SetFree, gpu_generation.
  uint64_t gpu_generation = 0;  // Every change up to it is in `score`.
  DomainFragmentationScore score;  // Only ScoreNodes and SetFree are called on it once shared.
};

DomainLoss::DomainLoss(const DomainMapCache& maps, const GroupLookup& lookup, const GroupShapeEstimate& expected)
    : maps_(maps), lookup_(lookup), expected_(expected) {}

DomainLoss::~DomainLoss() = default;

bool DomainLoss::Enabled(const cluster::PodRequest& pod) const {
  if (pod.gpus <= 0 || !pod.error.empty() || lookup_.IsMember(pod)) return false;
  if (!expected_.any()) return false;
  maps_.Get();  // Rebuilt here, if the nodes changed, while no lock of the model's is held.
  return true;
}

void DomainLoss::Losses(const cluster::ClusterModel::Reader& reader, const cluster::PodRequest& pod,
                        std::span<const cluster::NodeState* const> nodes, std::span<double> out) const {
  std::fill(out.begin(), out.end(), 0.0);
  // Read before the nodes: a change after it leaves newer GPUs under an older generation (read
  // again next time), never older GPUs under a newer one.
  const uint64_t gpus = maps_.model().gpu_generation();
  const std::shared_ptr<Prepared> p = PreparedNow(reader, gpus);
  if (!p) return;
  std::shared_lock lock(p->mu);
  if (p->gpu_generation < gpus) {
    lock.unlock();
    BringUpToDate(*p, gpus);
    lock.lock();
  }
  if (!p->score.enabled()) return;
  std::vector<int> mapped(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) mapped[i] = IndexOf(*p, nodes[i]);
  p->score.ScoreNodes(mapped, pod.gpus, out);
}

int DomainLoss::IndexOf(const Prepared& p, const cluster::NodeState* node) {
  const uint32_t slot = node->slot();
  if (slot >= p.by_slot.size()) return -1;
  const Prepared::SlotEntry& e = p.by_slot[slot];
  return e.node == node ? e.index : -1;
}

std::shared_ptr<DomainLoss::Prepared> DomainLoss::PreparedNow(const cluster::ClusterModel::Reader& reader,
                                                              uint64_t gpus) const {
  const std::shared_ptr<const DomainMap> map = maps_.Peek();
  const std::shared_ptr<const GroupShapeSnapshot> shapes = expected_.Snapshot();
  if (!map || shapes->shapes.empty()) return nullptr;
  const uint64_t nodes = maps_.model().node_generation();
  {
    std::lock_guard lock(mu_);
    if (prepared_ && prepared_->map == map && prepared_->shapes == shapes && prepared_->node_generation == nodes &&
        (incremental_ || prepared_->gpu_generation == gpus))
      return prepared_;
  }
  auto p = Read(reader, map, shapes, gpus, nodes);
  std::lock_guard lock(mu_);
  prepared_ = p;
  return p;
}

// The nodes are those of p (the caller holds a Reader, and the node generation is p's): only the
// nodes whose free GPUs changed since p's generation are scored again, or every node when the model
// no longer knows which (FreeChangeLog::ChangedSince).
void DomainLoss::BringUpToDate(Prepared& p, uint64_t gpus) const {
  std::unique_lock lock(p.mu);
  if (p.gpu_generation >= gpus) return;  // Another call did it.
  auto set_free = [&p](int i) {
    const cluster::NodeState* node = p.of[i];
    if (node && node->topology()) p.score.SetFree(i, (node->free() & node->usable()).size());
  };
  std::vector<uint32_t> slots;
  if (maps_.model().free_changes().ChangedSince(p.gpu_generation, gpus, &slots)) {
    for (uint32_t slot : slots)
      if (slot < p.by_slot.size() && p.by_slot[slot].index >= 0) set_free(p.by_slot[slot].index);
  } else {
    for (size_t i = 0; i < p.of.size(); ++i) set_free(static_cast<int>(i));
  }
  p.gpu_generation = gpus;
}

std::shared_ptr<DomainLoss::Prepared> DomainLoss::Read(const cluster::ClusterModel::Reader& reader,
                                                       const std::shared_ptr<const DomainMap>& map,
                                                       const std::shared_ptr<const GroupShapeSnapshot>& shapes,
                                                       uint64_t gpus, uint64_t nodes) const {
  auto p = std::make_shared<Prepared>();
  p->map = map;
  p->shapes = shapes;
  p->node_generation = nodes;
  p->gpu_generation = gpus;
  p->by_slot.assign(reader.slot_bound(), {});
  p->of.assign(map->size(), nullptr);
  GroupNodes all;
  all.domains = map.get();
  all.nodes.resize(map->size());
  std::vector<std::string_view> names(map->size());
  for (size_t i = 0; i < map->size(); ++i) names[i] = map->name(i);
  reader.FindEach(names, [&](uint32_t i, const cluster::NodeState* node) {
    if (!node) return;
    if (node->slot() < p->by_slot.size()) p->by_slot[node->slot()] = {node, static_cast<int>(i)};
    p->of[i] = node;
    if (node->topology()) all.nodes[i] = GroupNode{node->topology(), node->usable(), node->free()};
  });
  p->score.PreScore(all, *shapes);
  if (by_class_) p->score.ClassifyNodes();
  return p;
}

}  // namespace topofit::groups
