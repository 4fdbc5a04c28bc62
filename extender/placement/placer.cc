#include "extender/placement/placer.h"

namespace topofit::placement {

namespace {
constexpr uint8_t kNoMinLink = 7;
}

Placer::Placer(RequestMix mix) : mix_(std::move(mix)) {}

size_t Placer::KeyHash::operator()(const Key& k) const {
  uint64_t h = k.free * 0x9E3779B97F4A7C15ull;
  h ^= reinterpret_cast<uintptr_t>(k.topology) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= (uint64_t{k.k} << 8 | k.rule) * 0xC2B2AE3D27D4EB4Full;
  return static_cast<size_t>(h ^ (h >> 29));
}

PlacerChoice Placer::Compute(const Topology& topology, GpuSet free, int k, const cluster::PodIntent& intent) const {
  PlacerChoice c;
  const SetSelector& sel = topology.selector();
  SelectOptions plain;
  plain.mix = &mix_;
  std::optional<LinkClass> min = intent.EffectiveMinLink();
  if (k < 2) min.reset();  // One GPU has no pairs: every constraint holds.
  std::optional<SetChoice> choice;
  if (min) {
    SelectOptions constrained = plain;
    constrained.min_link = min;
    choice = sel.Best(free, k, constrained);
    if (!choice && intent.policy == cluster::TopologyPolicy::kBestEffort) {
      choice = sel.Best(free, k, plain);
      if (choice) c.meets_min_link = false;
    }
  } else {
    choice = sel.Best(free, k, plain);
  }
  c.future_before = sel.FutureScore(free, mix_);
  if (!choice) return c;
  c.found = true;
  c.gpus = choice->gpus;
  c.ring_mbps = choice->ring_mbps;
  c.future_after = sel.FutureScore(free - choice->gpus, mix_);
  return c;
}

PlacerChoice Placer::Choose(const Topology& topology, GpuSet free, int k, const cluster::PodIntent& intent) const {
  if (k < 1 || k > topology.gpu_count() || k > free.size()) {
    PlacerChoice c;
    return c;  // Not even the count fits: no need for FutureScore.
  }
  std::optional<LinkClass> min = intent.EffectiveMinLink();
  Key key{&topology, free.mask(), static_cast<uint16_t>(k),
          static_cast<uint8_t>(static_cast<uint8_t>(intent.policy) * 8 +
                               (min ? static_cast<uint8_t>(*min) : kNoMinLink))};
  Shard& shard = shards_[KeyHash()(key) % kShards];
  {
    std::lock_guard lock(shard.mu);
    if (auto it = shard.map.find(key); it != shard.map.end()) return it->second;
  }
  PlacerChoice c = Compute(topology, free, k, intent);
  std::lock_guard lock(shard.mu);
  if (shard.map.size() >= kShardLimit) shard.map.clear();
  shard.map.emplace(key, c);
  return c;
}

PlacerChoice Placer::FirstFit(const Topology& topology, GpuSet free, int k, const cluster::PodIntent& intent,
                              const std::vector<int>& first_fit) const {
  PlacerChoice c;
  if (k < 1 || k > free.size()) return c;
  GpuSet set;
  for (int i : first_fit) {
    if (set.size() == k) break;
    if (free.contains(i)) set.Add(i);
  }
  if (set.size() < k) return c;  // Free GPUs outside the allocator's order: it cannot give them.
  return Rate(topology, free, set, intent);
}

PlacerChoice Placer::Rate(const Topology& topology, GpuSet free, GpuSet set, const cluster::PodIntent& intent) const {
  PlacerChoice c;
  const int k = set.size();
  if (k < 1) return c;
  const SetSelector& sel = topology.selector();
  c.future_before = sel.FutureScore(free, mix_);
  std::optional<LinkClass> min = intent.EffectiveMinLink();
  c.meets_min_link = k < 2 || !min || sel.MeetsMinLink(set, *min);
  if (!c.meets_min_link && intent.policy == cluster::TopologyPolicy::kRequired) return c;
  c.found = true;
  c.gpus = set;
  c.ring_mbps = k < 2 ? 0 : sel.RingMbps(set);
  c.future_after = sel.FutureScore(free - set, mix_);
  return c;
}

uint64_t Placer::FullFuture(const Topology& topology, GpuSet usable) const {
  Key key{&topology, usable.mask(), 0, 0xFF};
  Shard& shard = shards_[KeyHash()(key) % kShards];
  {
    std::lock_guard lock(shard.mu);
    if (auto it = shard.map.find(key); it != shard.map.end()) return it->second.future_before;
  }
  PlacerChoice c;
  c.future_before = topology.selector().FutureScore(usable, mix_);
  std::lock_guard lock(shard.mu);
  if (shard.map.size() >= kShardLimit) shard.map.clear();
  shard.map.emplace(key, c);
  return c.future_before;
}

}  // namespace topofit::placement
