#include "extender/placement/cycle_state.h"

namespace topofit::placement {

CycleState::MemoSlot* CycleState::Slot(const Topology* topology, uint64_t free, uint64_t order,
                                       bool full_future) const {
  if (memo_.empty()) memo_.resize(kMemoSlots);
  uint64_t h = (free ^ (reinterpret_cast<uintptr_t>(topology) >> 4) ^ order ^ (full_future ? 0x5bd1e995u : 0)) *
               0x9E3779B97F4A7C15ull;
  for (size_t i = h >> 54;; i = (i + 1) & (kMemoSlots - 1)) {  // Top 10 bits: 1024 slots.
    MemoSlot& s = memo_[i];
    if (s.topology == topology && s.free == free && s.order == order && s.full_future == full_future) return &s;
    if (!s.topology) {
      if (memo_used_ >= kMemoMaxUsed) return nullptr;
      ++memo_used_;
      s.topology = topology;
      s.free = free;
      s.order = order;
      s.full_future = full_future;
      s.candidate.found = false;
      s.candidate.ring_mbps = UINT32_MAX;  // Marks "not computed yet".
      return &s;
    }
  }
}

PlacerChoice CycleState::Compute(const NodeView& v, GpuSet free) const {
  const cluster::ResolvedTopology& spec = v.node->spec();
  if (pod_.dra_ask) {  // Its own claims: only where the allocator's set is predicted.
    const cluster::DraNodeAsk* ask = spec.dra() ? pod_.dra_ask->Find(v.name) : nullptr;
    std::optional<GpuSet> set = ask ? cluster::PredictDraAsk(*ask, free) : std::nullopt;
    return set ? placer_.Rate(*v.topology(), free, *set, pod_.intent) : PlacerChoice{};
  }
  if (spec.dra()) return placer_.FirstFit(*v.topology(), free, pod_.gpus, pod_.intent, spec.first_fit);
  return placer_.Choose(*v.topology(), free, pod_.gpus, pod_.intent);
}

PlacerChoice CycleState::ChoiceFor(const NodeView& v, GpuSet free) const {
  const Topology* topology = v.topology();
  if (!topology) return {};
  // On a shared node: one replica per GPU unless the pod packs; MIG devices best fit.
  free = v.node->spec().shared.Offerable(free, pod_.gpus, pod_.intent.packed_replicas);
  MemoSlot* slot = Slot(topology, free.mask(), SetOrderOf(v, pod_.dra_ask.get()), false);
  if (!slot) return Compute(v, free);
  if (slot->candidate.ring_mbps == UINT32_MAX) slot->candidate = Compute(v, free);
  return slot->candidate;
}

uint64_t CycleState::FullFuture(const NodeView& v) const {
  const Topology* topology = v.topology();
  if (!topology) return 0;
  MemoSlot* slot = Slot(topology, v.usable().mask(), 0, true);
  if (!slot) return placer_.FullFuture(*topology, v.usable());
  if (slot->candidate.ring_mbps == UINT32_MAX) {
    slot->candidate.future_before = placer_.FullFuture(*topology, v.usable());
    slot->candidate.ring_mbps = 0;
  }
  return slot->candidate.future_before;
}

}  // namespace topofit::placement
