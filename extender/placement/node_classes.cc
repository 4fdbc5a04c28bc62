#include "extender/placement/node_classes.h"

#include <bit>

namespace topofit::placement {

uint64_t NodeKey::Hash() const {
  // Independent multiplies (no chain through h), one final mix: this runs once per node per call.
  uint64_t h = (reinterpret_cast<uintptr_t>(topology) >> 4) ^ (usable * 0x9E3779B97F4A7C15ull) ^
               (free * 0xC2B2AE3D27D4EB4Full) ^
               (uint64_t(product) << 40) ^ (order * 0xFF51AFD7ED558CCDull);
  h ^= h >> 32;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

NodeClasses::NodeClasses(size_t max_nodes, const cluster::DraPodAsk* ask) : ask_(ask) {
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
  const NodeKey key = NodeKey::Of(v, ask_);
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

}  // namespace topofit::placement
