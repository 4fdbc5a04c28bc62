#pragma once
// NodeIndex: name -> NodeState lookup for the hot path (filter and prioritize look up every node of
// a request, up to 5,000 per call).
//
// Open addressing with linear probing over a flat array of {hash, node} slots: a lookup is one probe
// into a cache-resident array plus the NodeState itself, which the caller reads next anyway (its
// name and free mask share a cache line). Not synchronised: ClusterModel mutates it only under its
// exclusive lock and reads it under the shared lock. Does not own the nodes.

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace topofit::cluster {

class NodeState;

class NodeIndex {
 public:
  static uint64_t Hash(std::string_view s);  // Inline below: FindAll runs it 5,000 times a call.

  NodeState* Find(std::string_view name) const;
  // out[i] = Find(names[i]) for every i (out.size() == names.size()). Looks up a window of names at
  // once, prefetching each one's slot and then its NodeState, so that the cache misses of 5,000
  // lookups overlap instead of queueing (they were most of a 5,000-node call's model time).
  void FindAll(std::span<const std::string_view> names, std::span<const NodeState*> out) const;
  // Inserts, or replaces the node with the same name.
  void Put(NodeState* node);
  void Erase(std::string_view name);
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    NodeState* node = nullptr;  // nullptr: empty.
  };
  void Grow();
  size_t mask() const { return slots_.size() - 1; }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

inline uint64_t NodeIndex::Hash(std::string_view s) {
  // Eight bytes per step (a node name is three or four steps), then a final mix so that the low
  // bits (the slot) depend on every byte. The last step loads the last eight bytes, overlapping
  // the step before: with the length mixed in first, every byte still counts once, and no
  // variable-length copy (a call into libc, most of a lookup's time once) is needed.
  // Byte-wise FNV-1a was a visible share of a 5,000-node call too.
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  auto load = [](const char* p, size_t n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);  // n is a constant at each call: a plain load.
    return w;
  };
  const char* p = s.data();
  const size_t n = s.size();
  uint64_t h = 0xcbf29ce484222325ull ^ (n * kMul);
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      h = (h ^ load(p + i, 8)) * kMul;
      h ^= h >> 29;
    }
    h = (h ^ load(p + n - 8, 8)) * kMul;
  } else if (n >= 4) {
    h = (h ^ (load(p, 4) | load(p + n - 4, 4) << 32)) * kMul;  // First and last four, overlapping.
  } else if (n > 0) {
    h = (h ^ (uint64_t(uint8_t(p[0])) | uint64_t(uint8_t(p[n / 2])) << 8 | uint64_t(uint8_t(p[n - 1])) << 16)) * kMul;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace topofit::cluster
