#include "bench/device_plugin_replicas.h"

#include <vector>

namespace topofit::bench {
namespace {

// greedyAlloc's sort key for a candidate on GPU g: (comparator's key, picked from g in this call).
struct GpuCount {
  int total = 0, available = 0, picked = 0;
  int allocated() const { return total - available; }
};

// The next pick among `candidates`: the smallest key, ties uniformly at random.
int NextPick(const std::vector<int>& candidates, const std::vector<GpuCount>& gpus, const cluster::SharedDevices& s,
             SharedAllocationPolicy policy, std::mt19937_64& rng) {
  auto key = [&](int d) {
    const GpuCount& g = gpus[s.GpuOf(d)];
    const int held = policy == SharedAllocationPolicy::kDistributed ? g.allocated() : -g.allocated();
    return std::pair(held, g.picked);
  };
  std::vector<int> best;
  for (int d : candidates) {
    if (best.empty() || key(d) < key(best.front())) best.assign(1, d);
    else if (key(d) == key(best.front())) best.push_back(d);
  }
  return best[std::uniform_int_distribution<size_t>(0, best.size() - 1)(rng)];
}

}  // namespace

std::optional<GpuSet> DevicePluginSharedChoice(const cluster::SharedDevices& shared, GpuSet all, GpuSet free, int size,
                                               std::mt19937_64& rng, SharedAllocationPolicy policy) {
  if (size < 1 || free.size() < size) return std::nullopt;
  // A MIG device is an id of its own: one "GPU" per device (every key ties).
  cluster::SharedDevices per_id = shared;
  if (shared.mig()) per_id = cluster::SharedDevices{};
  std::vector<GpuCount> gpus(GpuSet::kMaxGpus);
  for (int d : all.Indices()) ++gpus[per_id.GpuOf(d)].total;
  for (int d : free.Indices()) ++gpus[per_id.GpuOf(d)].available;
  std::vector<int> candidates = free.Indices();
  GpuSet out;
  for (int i = 0; i < size; ++i) {
    const int d = NextPick(candidates, gpus, per_id, policy, rng);
    GpuCount& g = gpus[per_id.GpuOf(d)];
    --g.available;
    ++g.picked;
    out.Add(d);
    std::erase(candidates, d);
  }
  return out;
}

}  // namespace topofit::bench
