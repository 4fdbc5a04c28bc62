#include "extender/cluster/free_shapes.h"

#include <bit>
#include <functional>
#include <vector>

namespace topofit::cluster {

namespace {

// Packs disjoint s-cliques of the NVLink graph (adj) inside `mask`.
class CliquePacker {
 public:
  CliquePacker(std::vector<uint64_t> adj, int s, bool exact) : adj_(std::move(adj)), s_(s), exact_(exact) {}

  int Max(uint64_t mask) {
    if (std::popcount(mask) < s_) return 0;
    if (auto it = memo_.find(mask); it != memo_.end()) return it->second;
    int i = std::countr_zero(mask);
    uint64_t rest = mask & (mask - 1);
    int best = 0;
    // Every s-clique through i, built in increasing index order.
    bool found = false;
    const int bound = std::popcount(mask) / s_;  // No packing beats this; stop once reached.
    std::function<void(uint64_t, uint64_t, int)> extend = [&](uint64_t clique, uint64_t cand, int size) {
      if ((!exact_ && found) || best == bound) return;
      if (size == s_) {
        found = true;
        best = std::max(best, 1 + Max(mask & ~clique));
        return;
      }
      for (uint64_t c = cand; c; c &= c - 1) {
        int j = std::countr_zero(c);
        uint64_t next = cand & adj_[j] & ~((uint64_t{2} << j) - 1);
        if (std::popcount(next) + size + 1 < s_) continue;
        extend(clique | (uint64_t{1} << j), next, size + 1);
        if (!exact_ && found) return;
      }
    };
    extend(uint64_t{1} << i, rest & adj_[i], 1);
    // Leaving i out can only help in the exact search; greedy moves on when i fits nowhere.
    if ((exact_ && best < bound) || !found) best = std::max(best, Max(rest));
    memo_[mask] = best;
    return best;
  }

 private:
  std::vector<uint64_t> adj_;
  int s_;
  bool exact_;
  std::unordered_map<uint64_t, int> memo_;
};

}  // namespace

FreeShapes CountFreeShapes(const Topology& topology, GpuSet free) {
  FreeShapes out;
  const int n = topology.gpu_count();
  std::vector<uint64_t> adj(n, 0);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b && topology.link(a, b).cls == LinkClass::Nv) adj[a] |= uint64_t{1} << b;
  uint64_t mask = free.mask() & GpuSet::FirstN(n).mask();
  for (size_t i = 0; i < FreeShapes::kSizes.size(); ++i) {
    CliquePacker packer(adj, FreeShapes::kSizes[i], /*exact=*/n <= 16);
    out.nvlink_sets[i] = packer.Max(mask);
  }
  return out;
}

size_t FreeShapeCounter::KeyHash::operator()(const Key& k) const {
  return std::hash<uint64_t>()(k.free * 0x9E3779B97F4A7C15ull ^ reinterpret_cast<uintptr_t>(k.topology));
}

FreeShapes FreeShapeCounter::Count(const std::shared_ptr<const Topology>& topology, GpuSet free) {
  if (!topology) return {};
  Key key{topology.get(), free.mask()};
  {
    std::lock_guard lock(mu_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  FreeShapes shapes = CountFreeShapes(*topology, free);
  std::lock_guard lock(mu_);
  if (memo_.size() >= kLimit) memo_.clear();
  memo_.emplace(key, shapes);
  pins_.emplace(topology.get(), topology);
  return shapes;
}

}  // namespace topofit::cluster
