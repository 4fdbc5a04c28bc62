#pragma once
// FreeChangeLog: which nodes' free GPUs changed, in order - so that a view of every node's free GPUs
// (groups/domain_loss.h) is brought up to date by the few nodes that changed since it was read, not
// by reading all 5,000 again.
//   Record(slot)      a node (NodeState::slot()) published new free GPUs (NodeState::PublishLocked,
//                     after storing them); returns the generation it made.
//   generation()      how many changes were recorded (ClusterModel::gpu_generation).
//   ChangedSince(from, to, out)
//                     appends the slots of the changes from+1..to, in order (a slot may repeat):
//                     true when every one of them was still kept. False - read every node instead - when
//                     some were overwritten (only the last kKept are kept) or their Record has made the
//                     generation but not yet written the slot. Not an error: from >= to (nothing).
// A reader that loads generation() G and then the nodes' free GPUs sees at least every change up to G.
// Lock-free: Record and ChangedSince may run concurrently from any thread.

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace topofit::cluster {

class FreeChangeLog {
 public:
  static constexpr uint64_t kKept = 1024;

  uint64_t Record(uint32_t slot) {
    const uint64_t g = generation_.fetch_add(1, std::memory_order_acq_rel) + 1;
    ring_[g % kKept].store(Entry(g, slot), std::memory_order_release);
    return g;
  }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  bool ChangedSince(uint64_t from, uint64_t to, std::vector<uint32_t>* out) const {
    if (from >= to) return true;
    if (to - from > kKept) return false;
    for (uint64_t g = from + 1; g <= to; ++g) {
      const uint64_t e = ring_[g % kKept].load(std::memory_order_acquire);
      if (e >> 32 != (g & 0xffffffffu)) return false;
      out->push_back(static_cast<uint32_t>(e));
    }
    return true;
  }

 private:
  // The generation's low 32 bits beside the slot: an entry of another generation (one that is
  // kKept x k apart, k < 2^22) never passes for this one.
  static uint64_t Entry(uint64_t g, uint32_t slot) { return (g & 0xffffffffu) << 32 | slot; }
  std::atomic<uint64_t> generation_{0};
  std::array<std::atomic<uint64_t>, kKept> ring_{};
};

}  // namespace topofit::cluster
