#pragma once
// NodeIndex: name -> NodeState lookup for the hot path (filter and prioritize look up every node of
// a request, up to 5,000 per call).
//
// Open addressing with linear probing over a flat array of {hash, node} slots: a lookup is one probe
// into a cache-resident array plus the NodeState itself, which the caller reads next anyway (its
// name and free mask share a cache line). Not synchronised: ClusterModel mutates it only under its
// exclusive lock and reads it under the shared lock. Does not own the nodes.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace topofit::model {

class NodeState;

class NodeIndex {
 public:
  static uint64_t Hash(std::string_view s);

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
    NodeState* node = nullptr;    // nullptr: empty.
    const char* name = nullptr;   // node->name().data(): FindAll prefetches it with the node.
  };
  void Grow();
  size_t mask() const { return slots_.size() - 1; }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace topofit::model
