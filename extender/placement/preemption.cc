#include "extender/placement/preemption.h"

#include <algorithm>
#include <bit>
#include <unordered_map>
#include <unordered_set>

namespace topofit::placement {

namespace {

struct Victim {
  std::string uid;
  int32_t priority = 0;
  GpuSet gpus;  // Empty: holds no GPU on this node.
};

// Lower is better: fewest victims, then the lowest highest priority, then the lowest sum.
struct Cost {
  int count;
  int64_t max_priority;
  int64_t sum_priority;
  friend auto operator<=>(const Cost&, const Cost&) = default;
};

Cost CostOf(const std::vector<Victim>& v, uint32_t mask) {
  Cost c{std::popcount(mask), INT64_MIN, 0};
  for (size_t i = 0; i < v.size(); ++i) {
    if (!((mask >> i) & 1)) continue;
    c.max_priority = std::max<int64_t>(c.max_priority, v[i].priority);
    c.sum_priority += v[i].priority;
  }
  return c;
}

}  // namespace

PreemptOutcome Preempt(const Pipeline& pipeline, const cluster::PodRequest& pod, const NodeVictims& candidates) {
  PreemptOutcome out;
  if (!pod.error.empty()) return out;
  CycleState state(pod, pipeline.placer());
  auto reader = pipeline.model().Read();
  for (const auto& [name, given] : candidates) {
    const cluster::NodeState* node = reader.Find(name);
    if (!node) continue;
    std::unordered_map<std::string, cluster::Holding> held;
    GpuSet leaving;  // GPUs of pods already terminating: freed without evicting anyone.
    std::unordered_set<std::string> terminating;
    for (cluster::Holding& h : node->Holdings()) {
      if (h.terminating && h.kind == cluster::HoldingKind::kBound) {
        leaving = leaving | h.gpus;
        terminating.insert(h.uid);
        continue;
      }
      held.emplace(h.uid, std::move(h));
    }

    std::vector<Victim> kept;        // No GPU here: kept as the scheduler chose them.
    std::vector<Victim> gpu_victims;
    auto add = [&](const std::string& uid, std::optional<int32_t> priority) {
      Victim v{uid, 0, {}};
      if (terminating.count(uid)) return;  // Already on its way out.
      auto it = held.find(uid);
      if (it != held.end()) {
        v.gpus = it->second.gpus;
        v.priority = priority.value_or(it->second.priority);
      } else {
        v.priority = priority.value_or(0);
      }
      (v.gpus.empty() || !pod.wants_gpus() ? kept : gpu_victims).push_back(std::move(v));
    };
    if (given.empty()) {
      // Recent schedulers leave the list for the extender to fill: pods bound here, lowest priority first.
      for (const auto& [uid, h] : held) {
        if (h.kind != cluster::HoldingKind::kReserved && h.priority < pod.priority) add(uid, h.priority);
      }
    } else {
      for (const VictimCandidate& v : given) add(v.uid, v.priority);
    }
    std::sort(gpu_victims.begin(), gpu_victims.end(),
              [](const Victim& a, const Victim& b) { return a.priority != b.priority ? a.priority < b.priority : a.uid < b.uid; });

    const GpuSet free = node->free() | leaving;
    auto fits = [&](uint64_t mask) {
      GpuSet f = free;
      for (size_t i = 0; i < gpu_victims.size(); ++i)
        if ((mask >> i) & 1) f = f | gpu_victims[i].gpus;
      NodeView view{node->name(), node, f};
      return !pod.wants_gpus() || pipeline.FilterNode(state, view).passed();
    };
    const size_t m = gpu_victims.size();
    const uint64_t all = m >= 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
    if (!fits(all)) continue;  // Even every victim would not make room.
    uint64_t chosen = all;
    if (fits(0)) {
      chosen = 0;
    } else if (m <= 16) {
      Cost best = CostOf(gpu_victims, static_cast<uint32_t>(all));
      for (uint32_t mask = 1; mask < all; ++mask) {
        if (std::popcount(mask) > best.count) continue;
        Cost c = CostOf(gpu_victims, mask);
        if (c < best && fits(mask)) {
          best = c;
          chosen = mask;
        }
      }
    } else {
      // Greedy: lowest priority first until it fits, then drop any that are not needed (highest first).
      chosen = 0;
      for (size_t i = 0; i < m && !fits(chosen); ++i) chosen |= uint64_t{1} << i;
      for (size_t i = m; i-- > 0;) {
        uint64_t without = chosen & ~(uint64_t{1} << i);
        if (((chosen >> i) & 1) && fits(without)) chosen = without;
      }
    }
    std::vector<Victim> result = kept;
    for (size_t i = 0; i < m; ++i)
      if ((chosen >> i) & 1) result.push_back(gpu_victims[i]);
    std::stable_sort(result.begin(), result.end(), [](const Victim& a, const Victim& b) { return a.priority > b.priority; });
    auto& uids = out.victims[name];
    for (const Victim& v : result) uids.push_back(v.uid);
  }
  return out;
}

}  // namespace topofit::placement
