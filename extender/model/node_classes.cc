#include "extender/model/node_classes.h"

#include <bit>

namespace topofit::model {

NodeKey NodeKey::Of(const NodeView& v, bool resources) {
  NodeKey k;
  k.topology = v.topology();
  k.usable = v.usable().mask();
  k.free = v.free.mask();
  if (resources) {
    k.allocatable = v.node->allocatable();
    k.used_cpu_milli = v.node->used_cpu_milli();
    k.used_memory_bytes = v.node->used_memory_bytes();
  }
  return k;
}

uint64_t NodeKey::Hash() const {
  // Independent multiplies (no chain through h), one final mix: this runs once per node per call.
  uint64_t h = (reinterpret_cast<uintptr_t>(topology) >> 4) ^ (usable * 0x9E3779B97F4A7C15ull) ^
               (free * 0xC2B2AE3D27D4EB4Full) ^ (uint64_t(used_cpu_milli) * 0x165667B19E3779F9ull) ^
               (uint64_t(used_memory_bytes) * 0xD6E8FEB86659FD93ull) ^
               (uint64_t(allocatable.cpu_milli) * 0xFF51AFD7ED558CCDull) ^ uint64_t(allocatable.memory_bytes);
  h ^= h >> 32;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

NodeClasses::NodeClasses(size_t max_nodes, bool resources) : resources_(resources) {
  const size_t slots = std::bit_ceil(std::max<size_t>(16, 2 * max_nodes));
  table_.assign(slots, kEmpty);
  mask_ = slots - 1;
}

void NodeClasses::Grow() {
  table_.assign(table_.size() * 2, kEmpty);
  mask_ = table_.size() - 1;
  for (uint32_t c = 0; c < keys_.size(); ++c) {
    uint64_t i = keys_[c].Hash() & mask_;
    while (table_[i] != kEmpty) i = (i + 1) & mask_;
    table_[i] = c;
  }
}

uint32_t NodeClasses::Classify(const NodeView& v) {
  if (2 * (views_.size() + 1) > table_.size()) Grow();
  const NodeKey key = NodeKey::Of(v, resources_);
  for (uint64_t i = key.Hash() & mask_;; i = (i + 1) & mask_) {
    uint32_t c = table_[i];
    if (c == kEmpty) {
      c = static_cast<uint32_t>(views_.size());
      table_[i] = c;
      keys_.push_back(key);
      views_.push_back(v);
      return c;
    }
    if (keys_[c] == key) return c;
  }
}

}  // namespace topofit::model
