#include "extender/placement/preemption.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <optional>
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

// The pods holding GPUs on a node, split: those already terminating (their GPUs freed without
// evicting anyone; never victims) and the others, by uid.
struct NodeHolders {
  std::unordered_map<std::string, cluster::Holding> held;
  GpuSet leaving;
  std::unordered_set<std::string> terminating;
};

NodeHolders HoldersOf(const cluster::NodeState& node) {
  NodeHolders out;
  for (cluster::Holding& h : node.Holdings()) {
    if (h.terminating && h.kind == cluster::HoldingKind::kBound) {
      out.leaving = out.leaving | h.gpus;
      out.terminating.insert(h.uid);
      continue;
    }
    out.held.emplace(h.uid, std::move(h));
  }
  return out;
}

// A node's victims: those holding GPUs there (for a GPU pod), lowest priority first, and the rest,
// kept as the scheduler chose them. An empty `given` (recent schedulers leave the list to the
// extender): the pods bound there below the pod's priority.
struct NodeVictimSplit {
  std::vector<Victim> kept;
  std::vector<Victim> gpu_victims;
};

NodeVictimSplit SplitVictims(const cluster::PodRequest& pod, const std::vector<VictimCandidate>& given,
                             const NodeHolders& holders) {
  NodeVictimSplit out;
  auto add = [&](const std::string& uid, std::optional<int32_t> priority) {
    Victim v{uid, 0, {}};
    if (holders.terminating.count(uid)) return;  // Already on its way out.
    auto it = holders.held.find(uid);
    if (it != holders.held.end()) {
      v.gpus = it->second.gpus;
      v.priority = priority.value_or(it->second.priority);
    } else {
      v.priority = priority.value_or(0);
    }
    (v.gpus.empty() || !pod.wants_gpus() ? out.kept : out.gpu_victims).push_back(std::move(v));
  };
  if (given.empty()) {
    for (const auto& [uid, h] : holders.held) {
      if (h.kind != cluster::HoldingKind::kReserved && h.priority < pod.priority) add(uid, h.priority);
    }
  } else {
    for (const VictimCandidate& v : given) add(v.uid, v.priority);
  }
  std::sort(out.gpu_victims.begin(), out.gpu_victims.end(),
            [](const Victim& a, const Victim& b) { return a.priority != b.priority ? a.priority < b.priority : a.uid < b.uid; });
  return out;
}

using Fits = std::function<bool(uint64_t mask)>;  // Whether evicting the victims of `mask` makes room.

// Exact, for up to 16 victims: of the subsets that fit, the cheapest (Cost); `all` when only all fit.
uint64_t CheapestFitting(const std::vector<Victim>& victims, uint64_t all, const Fits& fits) {
  uint64_t chosen = all;
  Cost best = CostOf(victims, static_cast<uint32_t>(all));
  for (uint32_t mask = 1; mask < all; ++mask) {
    if (std::popcount(mask) > best.count) continue;
    Cost c = CostOf(victims, mask);
    if (c < best && fits(mask)) {
      best = c;
      chosen = mask;
    }
  }
  return chosen;
}

// Greedy: lowest priority first until it fits, then drop any that are not needed (highest first).
uint64_t GreedyFitting(size_t m, const Fits& fits) {
  uint64_t chosen = 0;
  for (size_t i = 0; i < m && !fits(chosen); ++i) chosen |= uint64_t{1} << i;
  for (size_t i = m; i-- > 0;) {
    uint64_t without = chosen & ~(uint64_t{1} << i);
    if (((chosen >> i) & 1) && fits(without)) chosen = without;
  }
  return chosen;
}

// The GPU victims to evict, as a mask over `victims`: none when the pod fits already; nullopt when
// even all of them would not make room.
std::optional<uint64_t> ChooseVictims(const std::vector<Victim>& victims, const Fits& fits) {
  const size_t m = victims.size();
  const uint64_t all = m >= 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  if (!fits(all)) return std::nullopt;
  if (fits(0)) return 0;
  return m <= 16 ? CheapestFitting(victims, all, fits) : GreedyFitting(m, fits);
}

// The uids of `kept` and the chosen GPU victims, by decreasing priority (stable: as listed on ties).
std::vector<std::string> ByDecreasingPriority(const NodeVictimSplit& split, uint64_t chosen) {
  std::vector<Victim> result = split.kept;
  for (size_t i = 0; i < split.gpu_victims.size(); ++i)
    if ((chosen >> i) & 1) result.push_back(split.gpu_victims[i]);
  std::stable_sort(result.begin(), result.end(), [](const Victim& a, const Victim& b) { return a.priority > b.priority; });
  std::vector<std::string> uids;
  for (const Victim& v : result) uids.push_back(v.uid);
  return uids;
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
    const NodeHolders holders = HoldersOf(*node);
    const NodeVictimSplit split = SplitVictims(pod, given, holders);
    const GpuSet free = node->free() | holders.leaving;
    auto fits = [&](uint64_t mask) {
      GpuSet f = free;
      for (size_t i = 0; i < split.gpu_victims.size(); ++i)
        if ((mask >> i) & 1) f = f | split.gpu_victims[i].gpus;
      NodeView view{node->name(), node, f};
      return !pod.wants_gpus() || pipeline.FilterNode(state, view).passed();
    };
    const std::optional<uint64_t> chosen = ChooseVictims(split.gpu_victims, fits);
    if (!chosen) continue;  // Even every victim would not make room.
    out.victims[name] = ByDecreasingPriority(split, *chosen);
  }
  return out;
}

}  // namespace topofit::placement
