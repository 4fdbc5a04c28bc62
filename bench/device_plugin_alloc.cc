#include "bench/device_plugin_alloc.h"

#include <algorithm>
#include <functional>

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
  const int padding = int(devices.size()) - available.size();

  int best_total = -1;
  std::vector<std::vector<int>> best_partition, accum;

  auto set_score = [&](const std::vector<int>& set) {
    int s = 0;
    for (size_t i = 0; i < set.size(); ++i)
      for (size_t j = i + 1; j < set.size(); ++j)
        if (set[i] >= 0 && set[j] >= 0) s += PairScore(set[i], set[j]);
    return s;
  };

  // Upstream iterateGPUPartitions: the first remaining device anchors each group, so every split is
  // visited once, in the same order as upstream.
  std::function<void(const std::vector<int>&)> iterate = [&](const std::vector<int>& devs) {
    if (int(devs.size()) == size) {
      accum.push_back(devs);
      int total = 0;
      for (const auto& s : accum) total += set_score(s);
      if (total > best_total || best_partition.empty()) {
        best_total = total;
        best_partition = accum;
      }
      accum.pop_back();
      return;
    }
    const int rest = int(devs.size()) - 1;
    std::vector<int> idx(size - 1);
    for (int i = 0; i < size - 1; ++i) idx[i] = i;
    while (true) {
      std::vector<int> set{devs[0]};
      for (int i : idx) set.push_back(devs[1 + i]);
      int p = 0;
      for (int d : set) p += d < 0;
      if (p == 0 || p == padding) {
        std::vector<int> remaining;
        for (int d = 1; d <= rest; ++d) {
          if (std::find(idx.begin(), idx.end(), d - 1) == idx.end()) remaining.push_back(devs[d]);
        }
        accum.push_back(set);
        iterate(remaining);
        accum.pop_back();
      }
      int i = size - 2;
      while (i >= 0 && idx[i] == rest - (size - 1) + i) --i;
      if (i < 0) break;
      ++idx[i];
      for (int j = i + 1; j < size - 1; ++j) idx[j] = idx[j - 1] + 1;
    }
  };
  iterate(devices);

  // The highest-scoring group of the best split; groups holding padding score less than any real
  // group (every real pair scores >= 10), so they are never the answer.
  const std::vector<int>* best = nullptr;
  int best_score = -1;
  for (const auto& set : best_partition) {
    bool padded = false;
    for (int d : set) padded |= d < 0;
    if (padded) continue;
    int s = set_score(set);
    if (s > best_score) {
      best_score = s;
      best = &set;
    }
  }
  if (!best) return std::nullopt;
  return GpuSet::Of(*best);
}

}  // namespace topofit::bench
