#include "bench/device_plugin_alloc.h"

#include <algorithm>

namespace topofit::bench {
namespace {

int LinkPoints(Link link, bool same_numa) {
  switch (link.cls) {
    case LinkClass::Sys: return 10;
    case LinkClass::Node: return 20;
    case LinkClass::Phb: return 30;
    case LinkClass::Pxb: return 40;
    case LinkClass::Pix: return 50;
    case LinkClass::Nv: return 100 * link.nvlinks + (same_numa ? 20 : 10);
    case LinkClass::Self: return 0;
  }
  return 0;
}

// Upstream iterateGPUPartitions over the padded device list (-1: padding): the first remaining
// device anchors each group, so every split is visited once, in the same order as upstream; keeps the
// first split with the highest total (a group holds no padding or all of it).
class PartitionSearch {
 public:
  PartitionSearch(const DevicePluginAllocator& alloc, int size, int padding)
      : alloc_(alloc), size_(size), padding_(padding) {}

  // The group's pair scores summed, padding left out.
  int GroupScore(const std::vector<int>& set) const {
    int s = 0;
    for (size_t i = 0; i < set.size(); ++i)
      for (size_t j = i + 1; j < set.size(); ++j)
        if (set[i] >= 0 && set[j] >= 0) s += alloc_.PairScore(set[i], set[j]);
    return s;
  }

  void Iterate(const std::vector<int>& devs) {
    if (int(devs.size()) == size_) return Leaf(devs);
    const int rest = int(devs.size()) - 1;
    std::vector<int> idx(size_ - 1);
    for (int i = 0; i < size_ - 1; ++i) idx[i] = i;
    do {
      std::vector<int> set{devs[0]};
      for (int i : idx) set.push_back(devs[1 + i]);
      int p = 0;
      for (int d : set) p += d < 0;
      if (p != 0 && p != padding_) continue;
      std::vector<int> remaining;
      for (int d = 1; d <= rest; ++d) {
        if (std::find(idx.begin(), idx.end(), d - 1) == idx.end()) remaining.push_back(devs[d]);
      }
      accum_.push_back(set);
      Iterate(remaining);
      accum_.pop_back();
    } while (NextCombination(idx, rest));
  }

  const std::vector<std::vector<int>>& best() const { return best_partition_; }

 private:
  // The last group completes a split: keep it if it beats the best so far.
  void Leaf(const std::vector<int>& devs) {
    accum_.push_back(devs);
    int total = 0;
    for (const auto& s : accum_) total += GroupScore(s);
    if (total > best_total_ || best_partition_.empty()) {
      best_total_ = total;
      best_partition_ = accum_;
    }
    accum_.pop_back();
  }

  // The next (size - 1)-combination of 0..rest-1 in lexicographic order; false after the last.
  bool NextCombination(std::vector<int>& idx, int rest) const {
    int i = size_ - 2;
    while (i >= 0 && idx[i] == rest - (size_ - 1) + i) --i;
    if (i < 0) return false;
    ++idx[i];
    for (int j = i + 1; j < size_ - 1; ++j) idx[j] = idx[j - 1] + 1;
    return true;
  }

  const DevicePluginAllocator& alloc_;
  const int size_, padding_;
  int best_total_ = -1;
  std::vector<std::vector<int>> best_partition_, accum_;
};

}  // namespace

DevicePluginAllocator::DevicePluginAllocator(const PairMatrix& pairs, std::vector<int> numa) : n_(pairs.n) {
  pair_score_.assign(size_t(n_) * n_, 0);
  for (int a = 0; a < n_; ++a) {
    for (int b = 0; b < n_; ++b) {
      if (a == b) continue;
      bool same = numa.empty() || numa[a] < 0 || numa[b] < 0 || numa[a] == numa[b];
      pair_score_[size_t(a) * n_ + b] = LinkPoints(pairs.link(a, b), same);
    }
  }
}

static std::vector<int> NumaOf(const Topology& t) {
  std::vector<int> numa(t.gpu_count(), -1);
  for (int i = 0; i < t.gpu_count(); ++i) numa[i] = t.numa_node(i).value_or(-1);
  return numa;
}

DevicePluginAllocator::DevicePluginAllocator(const Topology& topology)
    : DevicePluginAllocator(topology.pairs(), NumaOf(topology)) {}

int DevicePluginAllocator::SetScore(GpuSet set) const {
  int score = 0;
  std::vector<int> v = set.Indices();
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i + 1; j < v.size(); ++j) score += PairScore(v[i], v[j]);
  return score;
}

std::optional<GpuSet> DevicePluginAllocator::Allocate(GpuSet available, int size) {
  if (size < 1 || available.size() < size) return std::nullopt;
  uint64_t key = available.mask() * 65 + uint64_t(size);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  auto r = Compute(available, size);
  if (r) memo_.emplace(key, *r);
  return r;
}

std::optional<GpuSet> DevicePluginAllocator::Compute(GpuSet available, int size) const {
  std::vector<int> devices = available.Indices();
  if (size == 1) return GpuSet::Of({devices.front()});
  // Padding: -1 entries appended so that the list splits evenly (upstream gpuSetCopyAndAddPadding).
  while (devices.size() % size != 0) devices.push_back(-1);
  PartitionSearch search(*this, size, int(devices.size()) - available.size());
  search.Iterate(devices);

  // The highest-scoring group of the best split; groups holding padding score less than any real
  // group (every real pair scores >= 10), so they are never the answer.
  const std::vector<int>* best = nullptr;
  int best_score = -1;
  for (const auto& set : search.best()) {
    bool padded = false;
    for (int d : set) padded |= d < 0;
    if (padded) continue;
    int s = search.GroupScore(set);
    if (s > best_score) {
      best_score = s;
      best = &set;
    }
  }
  if (!best) return std::nullopt;
  return GpuSet::Of(*best);
}

}  // namespace topofit::bench
