#include "extender/model/node_index.h"

#include <cstring>

#include "extender/model/node_state.h"

namespace topofit::model {

uint64_t NodeIndex::Hash(std::string_view s) {
  // Eight bytes per step (a node name is two or three steps), then a final mix so that the low
  // bits (the slot) depend on every byte. Byte-wise FNV-1a was a visible share of a 5,000-node call.
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0xcbf29ce484222325ull ^ (s.size() * kMul);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * kMul;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

NodeState* NodeIndex::Find(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  const uint64_t h = Hash(name);
  for (size_t i = h & mask();; i = (i + 1) & mask()) {
    const Slot& s = slots_[i];
    if (!s.node) return nullptr;
    if (s.hash == h && s.node->name() == name) return s.node;
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
    if (slots_[i].hash == h && slots_[i].node->name() == node->name()) {
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
    if (slots_[i].hash == h && slots_[i].node->name() == name) break;
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

}  // namespace topofit::model
