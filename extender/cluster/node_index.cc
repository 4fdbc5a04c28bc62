#include "extender/cluster/node_index.h"

#include <cstring>

#include "extender/cluster/node_state.h"

namespace topofit::cluster {

NodeState* NodeIndex::Find(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  const uint64_t h = Hash(name);
  for (size_t i = h & mask();; i = (i + 1) & mask()) {
    const Slot& s = slots_[i];
    if (!s.node) return nullptr;
    if (s.hash == h && s.node->name_view() == name) return s.node;
  }
}

void NodeIndex::FindAll(std::span<const std::string_view> names, std::span<const NodeState*> out) const {
  const size_t n = names.size();
  if (slots_.empty()) {
    for (size_t i = 0; i < n; ++i) out[i] = nullptr;
    return;
  }
  // Three stages, kWindow names apart: hash and prefetch the home slot; read the slot (now cached)
  // and prefetch its NodeState (whose first two lines hold the name); compare the name (now
  // cached) and probe on if needed.
  constexpr size_t kWindow = 8;
  uint64_t hashes[kWindow];
  const Slot* first_hit[kWindow];
  // Each iteration runs the stages last to first, so each reads its ring slot before the stage
  // behind it overwrites that slot with the entry kWindow names later.
  for (size_t i = 0; i < n + 2 * kWindow; ++i) {
    if (i >= 2 * kWindow) {
      size_t j = i - 2 * kWindow;
      const Slot* hit = first_hit[j % kWindow];
      // A 64-bit hash match is almost always the node; on a collision, the plain lookup decides.
      const std::string_view want = names[j];
      const bool same = hit && hit->node->name_view() == want;  // Bytes in the prefetched lines.
      out[j] = same ? hit->node : (hit ? Find(want) : nullptr);
    }
    if (i >= kWindow && i - kWindow < n) {
      size_t j = i - kWindow;
      const uint64_t h = hashes[j % kWindow];
      const Slot* hit = nullptr;
      for (size_t k = h & mask(); slots_[k].node; k = (k + 1) & mask()) {
        if (slots_[k].hash == h) {
          hit = &slots_[k];
          break;
        }
      }
      first_hit[j % kWindow] = hit;
      if (hit) {
        __builtin_prefetch(hit->node);
        __builtin_prefetch(reinterpret_cast<const char*>(hit->node) + 64);
      }
    }
    if (i < n) {
      hashes[i % kWindow] = Hash(names[i]);
      __builtin_prefetch(&slots_[hashes[i % kWindow] & mask()]);
    }
  }
}

void NodeIndex::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
  for (const Slot& s : old) {
    if (!s.node) continue;
    size_t i = s.hash & mask();
    while (slots_[i].node) i = (i + 1) & mask();
    slots_[i] = s;
  }
}

void NodeIndex::Put(NodeState* node) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();  // Load factor <= 1/2: short probes.
  const uint64_t h = Hash(node->name());
  size_t i = h & mask();
  for (; slots_[i].node; i = (i + 1) & mask()) {
    if (slots_[i].hash == h && slots_[i].node->name_view() == node->name_view()) {
      slots_[i].node = node;
      return;
    }
  }
  slots_[i] = Slot{h, node};
  ++size_;
}

void NodeIndex::Erase(std::string_view name) {
  if (slots_.empty()) return;
  const uint64_t h = Hash(name);
  size_t i = h & mask();
  for (;; i = (i + 1) & mask()) {
    if (!slots_[i].node) return;
    if (slots_[i].hash == h && slots_[i].node->name_view() == name) break;
  }
  // Backward-shift deletion keeps every remaining entry reachable from its home slot.
  slots_[i] = Slot{};
  --size_;
  for (size_t j = (i + 1) & mask(); slots_[j].node; j = (j + 1) & mask()) {
    size_t home = slots_[j].hash & mask();
    // Move j into the hole if its home is not in the cyclic range (i, j].
    bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!between) {
      slots_[i] = slots_[j];
      slots_[j] = Slot{};
      i = j;
    }
  }
}

}  // namespace topofit::cluster
