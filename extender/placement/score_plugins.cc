#include "extender/placement/score_plugins.h"

#include "extender/placement/pipeline_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace topofit::placement {

namespace {

// A pod whose set's ring counts: 2 GPUs or more, topology policy not none.
bool IsMultiGpu(const cluster::PodRequest& pod) {
  return pod.gpus >= 2 && pod.intent.policy != cluster::TopologyPolicy::kNone;
}

}  // namespace

// The value chosen by the procedure of docs/placement.md ("The exchange rate").
double PipelineConfig::DefaultInterconnectRate() { return 4; }

std::vector<std::unique_ptr<ScorePlugin>> AllScorePlugins() {
  std::vector<std::unique_ptr<ScorePlugin>> out;
  out.push_back(std::make_unique<SetQualityScore>());
  out.push_back(std::make_unique<PackingScore>());
  out.push_back(std::make_unique<FragmentationScore>());
  out.push_back(std::make_unique<StrandingScore>());
  out.push_back(std::make_unique<FragmentationGradientScore>());
  return out;
}

void SetQualityScore::PreScore(CycleState& state, std::span<const NodeView> nodes,
                               std::span<const PlacerChoice> candidates) const {
  uint32_t best = 0;
  for (const PlacerChoice& c : candidates)
    if (c.found) best = std::max(best, c.ring_mbps);
  state.best_ring_mbps = best;
}

double SetQualityScore::Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const {
  const cluster::PodRequest& pod = state.pod();
  if (pod.gpus < 2 || pod.intent.policy == cluster::TopologyPolicy::kNone) return 1.0;
  if (!c.found) return 0.0;
  // A finite exchange rate: FragmentationGradient prices the ring; only the min-link is left here.
  if (std::isfinite(state.interconnect_rate)) return c.meets_min_link ? 1.0 : 0.5;
  double s = state.best_ring_mbps == 0 ? 1.0 : double(c.ring_mbps) / state.best_ring_mbps;
  if (!c.meets_min_link) s *= 0.5;
  return std::clamp(s, 0.0, 1.0);
}

double PackingScore::Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const {
  const int usable = node.usable().size();
  if (usable == 0) return 0.0;
  const int used_after = usable - node.free.size() + state.pod().gpus;
  return std::clamp(double(used_after) / usable, 0.0, 1.0);
}

double FragmentationScore::Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const {
  if (!node.topology() || !c.found) return 0.0;
  const uint64_t full = state.FullFuture(node);
  if (full == 0) return 1.0;
  const uint64_t loss = c.future_before > c.future_after ? c.future_before - c.future_after : 0;
  return std::clamp(1.0 - double(loss) / double(full), 0.0, 1.0);
}

namespace {

// Free GPUs that still have their node's per-GPU share of CPU and memory beside them (fractional).
// gpus_per_cpu, gpus_per_byte: GPUs per unit of allocatable CPU and memory, 0 when the node has
// none (multiplied here: this runs twice per node of a 5,000-node prioritize, and divisions were
// most of its cost).
double BackedGpus(double gpus, double cpu, double mem, double gpus_per_cpu, double gpus_per_byte) {
  double backed = std::max(0.0, gpus);
  if (gpus_per_cpu > 0) backed = std::min(backed, std::max(0.0, cpu) * gpus_per_cpu);
  if (gpus_per_byte > 0) backed = std::min(backed, std::max(0.0, mem) * gpus_per_byte);
  return backed;
}

}  // namespace

double StrandingScore::Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const {
  const cluster::PodRequest& pod = state.pod();
  const int usable = node.usable().size();
  if (usable == 0 || pod.gpus <= 0) return 0.5;
  const cluster::NodeResources& alloc = node.node->allocatable();
  const double gpus_per_cpu = alloc.cpu_milli > 0 ? usable / double(alloc.cpu_milli) : 0.0;
  const double gpus_per_byte = alloc.memory_bytes > 0 ? usable / double(alloc.memory_bytes) : 0.0;
  const double gpus = node.free.size(), cpu = double(node.free_cpu_milli()), mem = double(node.free_memory_bytes());
  const double before = BackedGpus(gpus, cpu, mem, gpus_per_cpu, gpus_per_byte);
  const double after = BackedGpus(gpus - pod.gpus, cpu - double(pod.cpu_milli), mem - double(pod.memory_bytes),
                                  gpus_per_cpu, gpus_per_byte);
  const double waste = before - after - pod.gpus;
  return std::clamp(0.5 - waste / (2.0 * pod.gpus), 0.0, 1.0);
}

namespace {

// GPU-side terms of one workload shape on free GPUs F: n = floor(|F| / k) pods of the shape fit
// (0 when none, or a required shape finds no set meeting it; only n > 0 is used), q = the ring of its
// best set there relative to the best on the whole node.
void GpuTerms(const Placer& placer, const Topology& topology, GpuSet usable, GpuSet free,
              const FragmentationCycle::Group& shape, float* n, float* q) {
  const int k = shape.k, f = free.size();
  *n = 0;
  *q = 1;
  if (k <= 0 || f < k) return;
  if (k == 1) {
    *n = float(f);
    return;
  }
  const cluster::PodIntent intent{shape.policy, std::nullopt};
  const PlacerChoice here = placer.Choose(topology, free, k, intent);
  if (!here.found) return;
  *n = float(f / k);
  if (shape.policy == cluster::TopologyPolicy::kNone) return;
  const PlacerChoice whole = placer.Choose(topology, usable, k, intent);
  if (whole.ring_mbps > 0) *q = std::min(1.0f, float(here.ring_mbps) / float(whole.ring_mbps));
}

double FragOf(const FragmentationCycle& fc, int free, uint64_t allowed, const float* n, const float* q, double cpu,
              double mem) {
  double usable = 0;
  for (size_t i = 0; i < fc.shapes.size(); ++i) {
    if (!((allowed >> i) & 1)) continue;
    const auto& s = fc.shapes[i];
    if (n[s.group] <= 0) continue;                      // Too few GPUs, or no set meeting its policy.
    if (s.inv_cpu > 0 && cpu * s.inv_cpu < 1) continue;  // Too little CPU beside them.
    if (s.inv_mem > 0 && mem * s.inv_mem < 1) continue;  // Too little memory.
    usable += s.weight * free * q[s.group];
  }
  return double(free) - usable;
}

}  // namespace

namespace {

// The pod itself as the workload (no pod seen yet): one shape, weight 1.
PodShape OwnShape(const cluster::PodRequest& pod) {
  PodShape own;
  own.gpus = pod.gpus;
  own.cpu_milli = pod.cpu_milli;
  own.memory_bytes = pod.memory_bytes;
  own.policy = pod.intent.policy;
  for (const auto& p : pod.gpu_products) own.product_ids.push_back(cluster::GpuProductId(p));
  own.weight = 1;
  return own;
}

// fc.shapes from the first m shapes, and fc.groups: one per GPU count and policy among them.
void AddShapes(FragmentationCycle& fc, const std::vector<PodShape>& shapes, size_t m) {
  for (size_t j = 0; j < m; ++j) {
    const PodShape& sh = shapes[j];
    uint32_t g = 0;
    while (g < fc.groups.size() && !(fc.groups[g].k == sh.gpus && fc.groups[g].policy == sh.policy)) ++g;
    if (g == fc.groups.size()) fc.groups.push_back({sh.gpus, sh.policy});
    fc.shapes.push_back({sh.weight, sh.gpus, sh.cpu_milli > 0 ? 1.0 / double(sh.cpu_milli) : 0.0,
                         sh.memory_bytes > 0 ? 1.0 / double(sh.memory_bytes) : 0.0, g});
  }
}

// Bit j: shape j (of the first m) may use GPU model `product`; the wrong model loses every free GPU
// to the shape (its bit stays 0).
uint64_t AllowedShapes(const std::vector<PodShape>& shapes, size_t m, uint32_t product) {
  uint64_t allowed = 0;
  for (size_t j = 0; j < m; ++j) {
    const std::vector<uint32_t>& ids = shapes[j].product_ids;
    if (ids.empty() || std::find(ids.begin(), ids.end(), product) != ids.end()) allowed |= uint64_t{1} << j;
  }
  return allowed;
}

// t's GPU side on node v: its free GPUs and each group's n and q, before and after the pod takes
// c's set.
// On a node that shares its GPUs, fragmentation is of whole physical GPUs (a GPU is free when all
// its devices are) on the physical topology: replicas and MIG devices are not GPUs with links.
void FillGpuTerms(FragmentationCycle::Terms& t, FragmentationCycle& fc, const Placer& placer, const NodeView& v,
                  const PlacerChoice& c) {
  using F = FragmentationCycle;
  const size_t groups = fc.groups.size();
  const Topology* topology = v.topology();
  GpuSet usable = v.usable(), free = v.free;
  GpuSet after = c.found ? GpuSet(v.free.mask() & ~c.gpus.mask()) : v.free;
  if (const cluster::ResolvedTopology& spec = v.node->spec(); spec.shared.shared() && spec.physical) {
    topology = spec.physical.get();
    after = spec.shared.WholeFree(usable, after);
    free = spec.shared.WholeFree(usable, free);
    usable = spec.shared.GpusOf(usable);
  }
  t.free_before = free.size();
  t.free_after = after.size();
  t.at = static_cast<uint32_t>(fc.values.size());
  for (F::Part part : {F::kNBefore, F::kQBefore, F::kNAfter, F::kQAfter})
    fc.values.insert(fc.values.end(), groups, part == F::kQBefore || part == F::kQAfter ? 1.0f : 0.0f);
  float *n_before = fc.Of(t, F::kNBefore), *q_before = fc.Of(t, F::kQBefore);
  float *n_after = fc.Of(t, F::kNAfter), *q_after = fc.Of(t, F::kQAfter);
  for (size_t g = 0; g < groups; ++g)
    GpuTerms(placer, *topology, usable, free, fc.groups[g], &n_before[g], &q_before[g]);
  if (after == free) {  // A pod without GPUs: the GPU side stays as it is.
    std::copy_n(n_before, groups, n_after);
    std::copy_n(q_before, groups, q_after);
    return;
  }
  for (size_t g = 0; g < groups; ++g)
    GpuTerms(placer, *topology, usable, after, fc.groups[g], &n_after[g], &q_after[g]);
}

// ProductShortfall::Delta of the cycle's pod's GPUs by GPU model, each model's computed once; none
// without the cluster's free GPUs (CycleState::free_gpus: no shape bound to a model).
class ShortfallDeltas {
 public:
  ShortfallDeltas(const CycleState& state, const std::vector<PodShape>& shapes) : gpus_(state.pod().gpus) {
    if (state.free_gpus) shortfall_.emplace(shapes, *state.free_gpus, state.placer());
  }
  bool any() const { return shortfall_.has_value(); }
  double Of(uint32_t product) {
    for (const auto& [p, d] : deltas_)
      if (p == product) return d;
    deltas_.emplace_back(product, shortfall_->Delta(product, gpus_));
    return deltas_.back().second;
  }

 private:
  const int gpus_;
  std::optional<ProductShortfall> shortfall_;
  std::vector<std::pair<uint32_t, double>> deltas_;
};

}  // namespace

void FragmentationCycle::Reserve(size_t states) {
  entries_.reserve(states);
  size_t n = 16;
  while (n < 2 * states) n *= 2;  // At most half full.
  if (n > slots_.size()) {
    slots_.assign(n, 0);
    for (uint32_t i = 0; i < entries_.size(); ++i) slots_[SlotOf(entries_[i].first)] = i + 1;
  }
}

size_t FragmentationCycle::SlotOf(const Key& key) const {
  const size_t mask = slots_.size() - 1;
  size_t at = KeyHash{}(key) & mask;
  while (slots_[at] != 0 && !(entries_[slots_[at] - 1].first == key)) at = (at + 1) & mask;
  return at;
}

std::pair<FragmentationCycle::Terms*, bool> FragmentationCycle::Add(const Key& key) {
  if (2 * (entries_.size() + 1) > slots_.size()) Reserve(std::max<size_t>(8, 2 * entries_.size()));
  const size_t at = SlotOf(key);
  if (slots_[at] != 0) return {&entries_[slots_[at] - 1].second, false};
  entries_.emplace_back(key, Terms{});
  slots_[at] = static_cast<uint32_t>(entries_.size());
  return {&entries_.back().second, true};
}

const FragmentationCycle::Terms* FragmentationCycle::Find(const Key& key) const {
  if (slots_.empty()) return nullptr;
  const uint32_t slot = slots_[SlotOf(key)];
  return slot == 0 ? nullptr : &entries_[slot - 1].second;
}

void FragmentationGradientScore::PreScore(CycleState& state, std::span<const NodeView> nodes,
                                          std::span<const PlacerChoice> candidates) const {
  auto fc = std::make_shared<FragmentationCycle>();
  std::vector<PodShape> self;
  const std::vector<PodShape>* shapes = state.workload ? &state.workload->shapes : nullptr;
  if (!shapes || shapes->empty()) {
    self.push_back(OwnShape(state.pod()));
    shapes = &self;
  }
  const size_t m = std::min<size_t>(shapes->size(), 64);
  AddShapes(*fc, *shapes, m);
  ShortfallDeltas shortfall(state, *shapes);
  fc->Reserve(nodes.size());  // At most one Terms per node given (the pipeline gives one per class).
  fc->values.reserve(nodes.size() * 4 * fc->groups.size());
  int most_gpus = 1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeView& v = nodes[i];
    const PlacerChoice& c = candidates[i];
    if (c.found) fc->best_ring_mbps = std::max(fc->best_ring_mbps, c.ring_mbps);
    if (!v.topology()) continue;
    const cluster::SharedDevices& shared = v.node->spec().shared;  // Whole GPUs, as FillGpuTerms counts them.
    most_gpus = std::max(most_gpus, shared.shared() ? shared.GpusOf(v.usable()).size() : v.usable().size());
    FragmentationCycle::Key key{v.topology(), v.free.mask(), v.node->product_id()};
    auto [terms, added] = fc->Add(key);
    if (!added) continue;  // Terms depend only on the GPU state: computed once per state.
    FragmentationCycle::Terms& t = *terms;
    if (shortfall.any()) t.shortfall_delta = shortfall.Of(key.product);
    t.allowed = AllowedShapes(*shapes, m, key.product);
    FillGpuTerms(t, *fc, state.placer(), v, c);
  }
  fc->most_gpus = most_gpus;
  fc->scale = 1.0 / (2.0 * most_gpus);
  const cluster::PodRequest& pod = state.pod();
  if (IsMultiGpu(pod) && std::isfinite(state.interconnect_rate))  // The price adds up to R k GPUs.
    fc->scale = 1.0 / (2.0 * (most_gpus + state.interconnect_rate * pod.gpus));
  state.fragmentation = std::move(fc);
}

std::pair<double, double> FragmentationGradientScore::Frag(const CycleState& state, const NodeView& node,
                                                           const PlacerChoice& c) {
  const FragmentationCycle* fc = state.fragmentation.get();
  if (!fc || !node.topology()) return {0, 0};
  const FragmentationCycle::Terms* found = fc->Find({node.topology(), node.free.mask(), node.node->product_id()});
  if (!found) return {0, 0};
  const FragmentationCycle::Terms& t = *found;
  const cluster::PodRequest& pod = state.pod();
  const double cpu = double(node.free_cpu_milli()), mem = double(node.free_memory_bytes());
  using F = FragmentationCycle;
  const double before = FragOf(*fc, t.free_before, t.allowed, fc->Of(t, F::kNBefore), fc->Of(t, F::kQBefore), cpu, mem);
  const double after = FragOf(*fc, t.free_after, t.allowed, fc->Of(t, F::kNAfter), fc->Of(t, F::kQAfter),
                              cpu - double(pod.cpu_milli), mem - double(pod.memory_bytes));
  return {before, after + t.shortfall_delta};
}

double FragmentationGradientScore::Price(const CycleState& state, const PlacerChoice& c) {
  const FragmentationCycle* fc = state.fragmentation.get();
  if (!fc || !c.found || !IsMultiGpu(state.pod()) || c.ring_mbps >= fc->best_ring_mbps) return 0.0;
  const double rate = state.interconnect_rate;
  if (!std::isfinite(rate)) return std::numeric_limits<double>::infinity();
  return rate * state.pod().gpus * (1.0 - double(c.ring_mbps) / double(fc->best_ring_mbps));
}

std::pair<double, double> FragmentationGradientScore::Trade(const CycleState& state, const NodeView& node,
                                                            const PlacerChoice& c) {
  auto [before, after] = Frag(state, node, c);
  return {after - before, Price(state, c)};
}

double FragmentationGradientScore::Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const {
  const FragmentationCycle* fc = state.fragmentation.get();
  if (!fc || !c.found) return 0.0;
  auto [frag, price] = Trade(state, node, c);
  if (!std::isfinite(price)) return 0.0;  // The lexicographic rule: a slower set than the best.
  return std::clamp(0.5 - (frag + price) * fc->scale, 0.0, 1.0);
}

}  // namespace topofit::placement
