#include "extender/groups/domain_loss.h"

#include <algorithm>
#include <bit>

#include "extender/groups/domain_fragmentation.h"
#include "extender/groups/group_nodes.h"

namespace topofit::groups {
namespace {

// NodeState -> index into the DomainMap, for the nodes read through one Reader: open addressing on
// the pointer, so that a band of thousands of nodes costs one probe each, not a name lookup.
class StateIndex {
 public:
  explicit StateIndex(size_t n) : slots_(std::bit_ceil(std::max<size_t>(16, 2 * n))) {}
  void Put(const cluster::NodeState* state, uint32_t index) {
    for (size_t s = Slot(state);; s = (s + 1) & (slots_.size() - 1)) {
      if (!slots_[s].state || slots_[s].state == state) {
        slots_[s] = {state, index};
        return;
      }
    }
  }
  // -1 when `state` was not put.
  int Find(const cluster::NodeState* state) const {
    for (size_t s = Slot(state);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s].state == state) return static_cast<int>(slots_[s].index);
      if (!slots_[s].state) return -1;
    }
  }

 private:
  size_t Slot(const cluster::NodeState* state) const {
    const uint64_t h = (reinterpret_cast<uintptr_t>(state) >> 4) * 0x9E3779B97F4A7C15ull;
    return (h >> 32) & (slots_.size() - 1);
  }
  struct Entry {
    const cluster::NodeState* state = nullptr;
    uint32_t index = 0;
  };
  std::vector<Entry> slots_;
};

}  // namespace

// What every band's losses are read from while neither the nodes, their free GPUs nor the shapes
// change: the score's PreScore over every mapped node, and each node's index in the map.
struct DomainLoss::Prepared {
  std::shared_ptr<const DomainMap> map;
  std::shared_ptr<const GroupShapeSnapshot> shapes;
  uint64_t gpu_generation = 0;
  uint64_t node_generation = 0;
  // The mapped nodes' states: the same objects while node_generation is, shared by the Prepared
  // brought up to date from this one.
  struct States {
    explicit States(size_t n) : index(n), of(n, nullptr) {}
    StateIndex index;
    std::vector<const cluster::NodeState*> of;  // Per map index.
  };
  std::shared_ptr<const States> states;
  DomainFragmentationScore score;  // Only ScoreNodes is called on it once shared: const, reads only.
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
  const std::shared_ptr<const Prepared> p = PreparedNow(reader);
  if (!p || !p->score.enabled()) return;
  std::vector<int> mapped(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) mapped[i] = p->states->index.Find(nodes[i]);
  p->score.ScoreNodes(mapped, pod.gpus, out);
}

std::shared_ptr<const DomainLoss::Prepared> DomainLoss::PreparedNow(const cluster::ClusterModel::Reader& reader) const {
  const std::shared_ptr<const DomainMap> map = maps_.Peek();
  const std::shared_ptr<const GroupShapeSnapshot> shapes = expected_.Snapshot();
  if (!map || shapes->shapes.empty()) return nullptr;
  // Read before the nodes: a change after it leaves newer GPUs under an older generation (read
  // again next time), never older GPUs under a newer one.
  const uint64_t gpus = maps_.model().gpu_generation(), nodes = maps_.model().node_generation();
  std::shared_ptr<const Prepared> last;
  {
    std::lock_guard lock(mu_);
    if (prepared_ && prepared_->map == map && prepared_->shapes == shapes && prepared_->node_generation == nodes) {
      if (prepared_->gpu_generation == gpus) return prepared_;
      if (incremental_) last = prepared_;
    }
  }
  auto p = last ? Updated(*last, gpus) : Read(reader, map, shapes, gpus, nodes);
  std::lock_guard lock(mu_);
  prepared_ = p;
  return p;
}

// The same nodes as `last` (the caller holds a Reader, and the node generation is last's): only the
// nodes whose free GPUs changed are scored again.
std::shared_ptr<const DomainLoss::Prepared> DomainLoss::Updated(const Prepared& last, uint64_t gpus) {
  auto p = std::make_shared<Prepared>(last);
  p->gpu_generation = gpus;
  for (size_t i = 0; i < p->states->of.size(); ++i) {
    const cluster::NodeState* node = p->states->of[i];
    if (node && node->topology()) p->score.SetFree(static_cast<int>(i), (node->free() & node->usable()).size());
  }
  return p;
}

std::shared_ptr<const DomainLoss::Prepared> DomainLoss::Read(const cluster::ClusterModel::Reader& reader,
                                                             const std::shared_ptr<const DomainMap>& map,
                                                             const std::shared_ptr<const GroupShapeSnapshot>& shapes,
                                                             uint64_t gpus, uint64_t nodes) const {
  auto states = std::make_shared<Prepared::States>(map->size());
  auto p = std::make_shared<Prepared>(Prepared{map, shapes, gpus, nodes, states, {}});
  GroupNodes all;
  all.domains = map.get();
  all.nodes.resize(map->size());
  std::vector<std::string_view> names(map->size());
  for (size_t i = 0; i < map->size(); ++i) names[i] = map->name(i);
  reader.FindEach(names, [&](uint32_t i, const cluster::NodeState* node) {
    if (!node) return;
    states->index.Put(node, i);
    states->of[i] = node;
    if (node->topology()) all.nodes[i] = GroupNode{node->topology(), node->usable(), node->free()};
  });
  p->score.PreScore(all, *shapes);
  if (by_class_) p->score.ClassifyNodes();
  return p;
}

}  // namespace topofit::groups
