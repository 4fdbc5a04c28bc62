#include "bench/groups_policies.h"

#include <algorithm>
#include <optional>
#include <random>

#include "extender/groups/domain_loss.h"
#include "extender/groups/domain_map_cache.h"
#include "extender/groups/domain_tree.h"
#include "extender/k8s/objects.h"
#include "extender/placement/pipeline.h"

namespace topofit::bench {

std::vector<groups::MemberPlan> MostAllocated(const placement::Placer& placer, const groups::GroupNodes& nodes,
                                              const groups::GroupSpec& spec, std::mt19937_64& rng) {
  std::optional<size_t> best;
  placement::PlacerChoice chosen;
  int ties = 0;
  for (size_t i = 0; i < nodes.nodes.size(); ++i) {
    const groups::GroupNode& n = nodes.nodes[i];
    const GpuSet free = n.free & n.usable;
    if (!n.topology || (best && free.size() > (nodes.nodes[*best].free & nodes.nodes[*best].usable).size())) continue;
    placement::PlacerChoice c = placer.Choose(*n.topology, free, spec.gpus, spec.intent);
    if (!c.found) continue;
    const bool tie = best && free.size() == (nodes.nodes[*best].free & nodes.nodes[*best].usable).size();
    ties = tie ? ties + 1 : 1;
    if (tie && std::uniform_int_distribution<int>(1, ties)(rng) != 1) continue;  // Each tie kept with 1/ties.
    best = i;
    chosen = c;
  }
  if (!best) return {};
  return {groups::MemberPlan{static_cast<int>(*best), nodes.domains->name(*best), chosen.gpus, chosen.ring_mbps,
                             chosen.meets_min_link}};
}

std::vector<groups::MemberPlan> LeastAllocated(const placement::Placer& placer, const groups::GroupNodes& nodes,
                                               const groups::GroupSpec& spec) {
  std::vector<GpuSet> free;
  for (const groups::GroupNode& n : nodes.nodes) free.push_back(n.free & n.usable);
  std::vector<groups::MemberPlan> out;
  for (int m = 0; m < spec.size; ++m) {
    std::optional<size_t> best;
    placement::PlacerChoice chosen;
    for (size_t i = 0; i < nodes.nodes.size(); ++i) {
      if (!nodes.nodes[i].topology || (best && free[i].size() <= free[*best].size())) continue;
      placement::PlacerChoice c = placer.Choose(*nodes.nodes[i].topology, free[i], spec.gpus, spec.intent);
      if (!c.found) continue;
      best = i;
      chosen = c;
    }
    if (!best) break;
    free[*best] = free[*best] - chosen.gpus;
    out.push_back(groups::MemberPlan{static_cast<int>(*best), nodes.domains->name(*best), chosen.gpus, chosen.ring_mbps,
                                     chosen.meets_min_link});
  }
  return out;
}

namespace {

using groups::DomainTree;

constexpr uint64_t kPodSeed = 1;  // Ties among equal nodes for pods of no group (kube-scheduler: at random).
using groups::GroupNodes;
using groups::GroupSpec;
using groups::MemberPlan;

// topofit serve's answer for a pod of no group, on a mirror of the replay's nodes.
class SinglePods {
 public:
  SinglePods(const ClusterShape& shape, const groups::GroupShapeEstimate& expected, bool domain_loss)
      : lookup_(groups::DomainLevels::Defaults()),
        maps_(model_, groups::DomainLevels::Defaults()),
        loss_(maps_, lookup_, expected),
        pipeline_(&model_) {
    AddShapeNodes(shape, model_);
    names_ = model_.NodeNames();
    if (domain_loss) pipeline_.SetBandLoss(&loss_);
  }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec, const placement::Placer& placer) {
    Sync(nodes);
    k8s::PodObject pod;
    pod.meta.uid = pod.meta.name = spec.name;
    pod.meta.namespace_ = spec.namespace_;
    pod.gpus = spec.gpus;
    pod.phase = "Pending";
    const cluster::PodRequest request = cluster::MakePodRequest(pod);
    // kube-scheduler binds to one of the nodes of the best score at random (its in-tree scores being
    // equal here): one of topofit's 10s that has a set.
    std::vector<MemberPlan> best;
    for (const placement::NodeScore& s : pipeline_.Prioritize(request, std::span<const std::string>(names_))) {
      if (s.score != 10) continue;
      const std::optional<size_t> i = nodes.domains->Find(names_[s.index]);
      if (!i || !nodes.nodes[*i].topology) continue;
      const groups::GroupNode& n = nodes.nodes[*i];
      placement::PlacerChoice c = placer.Choose(*n.topology, n.free & n.usable, spec.gpus, request.intent);
      if (c.found) best.push_back(MemberPlan{static_cast<int>(*i), names_[s.index], c.gpus, c.ring_mbps, c.meets_min_link});
    }
    if (!best.empty()) return {best[std::uniform_int_distribution<size_t>(0, best.size() - 1)(rng_)]};
    return {};
  }

 private:
  // Every node's held GPUs in the mirror made those of `nodes` (one holder pod per node).
  void Sync(const GroupNodes& nodes) {
    held_.resize(nodes.nodes.size());
    for (size_t i = 0; i < nodes.nodes.size(); ++i) {
      const groups::GroupNode& n = nodes.nodes[i];
      const GpuSet held = n.usable - n.free;
      if (held == held_[i]) continue;
      held_[i] = held;
      const std::string uid = "held-" + nodes.domains->name(i);
      if (held.empty()) {
        model_.DeletePod(uid);
        continue;
      }
      k8s::PodObject pod;
      pod.meta.uid = pod.meta.name = uid;
      pod.meta.namespace_ = "bench";
      pod.meta.annotations[k8s::kGpuIdsAnnotation] = held.ToString();
      pod.gpus = held.size();
      pod.node_name = nodes.domains->name(i);
      pod.phase = "Running";
      model_.ApplyPod(pod);
    }
  }

  cluster::ClusterModel model_;
  groups::GroupLookup lookup_;
  groups::DomainMapCache maps_;
  groups::DomainLoss loss_;
  placement::Pipeline pipeline_;
  std::vector<std::string> names_;
  std::vector<GpuSet> held_;  // As last synchronised, by node index.
  std::mt19937_64 rng_{kPodSeed};
};

class TopofitGroups : public GroupPolicy {
 public:
  TopofitGroups(const placement::Placer& placer, groups::GroupShapeOptions options, const ClusterShape* shape,
                bool domain_loss)
      : placer_(placer), options_(options), shape_(shape), domain_loss_(domain_loss) {}
  std::string name() const override { return "topofit"; }
  // As topofit serve learns: each group arriving is observed before it is planned (GroupPlanner).
  void Start() override {
    singles_.reset();
    expected_ = std::make_unique<groups::GroupShapeEstimate>(options_);
    if (shape_) singles_ = std::make_unique<SinglePods>(*shape_, *expected_, domain_loss_);
  }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    if (!expected_) Start();
    groups::GroupPlan plan = groups::GroupPlanner(placer_, expected_.get()).Plan(nodes, spec);
    return plan.ok ? plan.members : std::vector<MemberPlan>{};
  }
  std::vector<MemberPlan> PlacePod(const GroupNodes& nodes, const GroupSpec& spec) override {
    if (!expected_) Start();
    return singles_ ? singles_->Place(nodes, spec, placer_) : LeastAllocated(placer_, nodes, spec);
  }

 private:
  const placement::Placer& placer_;
  const groups::GroupShapeOptions options_;
  const ClusterShape* shape_;
  const bool domain_loss_;
  std::unique_ptr<groups::GroupShapeEstimate> expected_;
  std::unique_ptr<SinglePods> singles_;  // Declared after expected_, which its DomainLoss reads.
};

class NoGang : public GroupPolicy {
 public:
  explicit NoGang(const placement::Placer& placer) : placer_(placer) {}
  std::string name() const override { return "no-gang"; }
  std::vector<MemberPlan> PlacePod(const GroupNodes& nodes, const GroupSpec& spec) override {
    return LeastAllocated(placer_, nodes, spec);  // kube-scheduler's, as every pod of no group.
  }
  bool gang() const override { return false; }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    return LeastAllocated(placer_, nodes, spec);
  }

 private:
  const placement::Placer& placer_;
};

// The members a tree's leaf gives: its first r sets.
void FromLeaf(const DomainTree& t, int leaf, int r, std::vector<MemberPlan>* out) {
  const groups::TreeUnit& u = t.unit(leaf);
  for (int j = 0; j < r; ++j) out->push_back(MemberPlan{u.node, u.name, u.sets[j].gpus, u.sets[j].ring_mbps, true});
}

// The levels a spec may use, narrowest first for `ascending`, else from the spec's level upwards;
// -1 is the whole cluster (preferred only).
std::vector<int> Levels(const DomainTree& t, const GroupSpec& spec, bool from_lowest) {
  std::vector<int> out;
  const auto& chain = t.chain();
  if (from_lowest) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (*it >= spec.level) out.push_back(*it);
    }
    if (out.empty() || out.back() != spec.level) out.push_back(spec.level);
  } else {
    out.push_back(spec.level);
  }
  if (spec.policy == groups::LevelPolicy::kPreferred) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (*it < spec.level) out.push_back(*it);
    }
    out.push_back(-1);
  }
  return out;
}

// Members to try: all, then the min-count when fewer (a gang of min_count).
std::vector<int> Wants(const GroupSpec& spec) {
  if (spec.min_count < spec.size) return {spec.size, spec.min_count};
  return {spec.size};
}

std::vector<int> UnitsOf(const DomainTree& t, int level) {
  return level < 0 ? std::vector<int>{DomainTree::kRoot} : t.UnitsAt(level);
}

class KueueBestFit : public GroupPolicy {
 public:
  explicit KueueBestFit(const placement::Placer& placer) : placer_(placer) {}
  std::string name() const override { return "kueue-bestfit"; }
  void Start() override { rng_.seed(kPodSeed); }
  std::vector<MemberPlan> PlacePod(const GroupNodes& nodes, const GroupSpec& spec) override {
    return MostAllocated(placer_, nodes, spec, rng_);  // kube-scheduler's, bin-packing GPUs.
  }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    DomainTree t(nodes, placer_, spec.gpus, spec.intent, spec.size);
    for (int m : Wants(spec)) {
      for (int level : Levels(t, spec, false)) {
        std::optional<int> fit = SmallestFit(t, UnitsOf(t, level), m);
        if (!fit) continue;
        std::vector<MemberPlan> out;
        Fill(t, *fit, m, &out);
        return out;
      }
    }
    return {};
  }

 private:
  // The unit of least capacity that still takes r (ties by name).
  static std::optional<int> SmallestFit(const DomainTree& t, const std::vector<int>& units, int r) {
    std::optional<int> fit;
    for (int u : units) {
      const auto& x = t.unit(u);
      if (x.capacity < r) continue;
      if (!fit || x.capacity < t.unit(*fit).capacity ||
          (x.capacity == t.unit(*fit).capacity && x.name < t.unit(*fit).name)) {
        fit = u;
      }
    }
    return fit;
  }
  static void Fill(const DomainTree& t, int unit, int r, std::vector<MemberPlan>* out) {
    if (t.IsLeaf(unit)) return FromLeaf(t, unit, r, out);
    std::vector<int> pool = t.unit(unit).children;
    while (r > 0) {
      if (auto fit = SmallestFit(t, pool, r)) return Fill(t, *fit, r, out);
      auto largest = std::min_element(pool.begin(), pool.end(), [&](int a, int b) {
        if (t.unit(a).capacity != t.unit(b).capacity) return t.unit(a).capacity > t.unit(b).capacity;
        return t.unit(a).name < t.unit(b).name;
      });
      const int c = *largest;
      pool.erase(largest);
      Fill(t, c, t.unit(c).capacity, out);
      r -= t.unit(c).capacity;
    }
  }
  std::mt19937_64 rng_{kPodSeed};
  const placement::Placer& placer_;
};

class VolcanoTier : public GroupPolicy {
 public:
  explicit VolcanoTier(const placement::Placer& placer) : placer_(placer) {}
  std::string name() const override { return "volcano-tier"; }
  void Start() override { rng_.seed(kPodSeed); }
  std::vector<MemberPlan> PlacePod(const GroupNodes& nodes, const GroupSpec& spec) override {
    return MostAllocated(placer_, nodes, spec, rng_);  // kube-scheduler's, bin-packing GPUs.
  }
  std::vector<MemberPlan> Place(const GroupNodes& nodes, const GroupSpec& spec) override {
    DomainTree t(nodes, placer_, spec.gpus, spec.intent, spec.size);
    for (int m : Wants(spec)) {  // minAvailable: the gang's minimum
      for (int level : Levels(t, spec, true)) {
        for (int u : UnitsOf(t, level)) {  // name order
          if (t.unit(u).capacity < m) continue;
          std::vector<MemberPlan> out;
          FirstFit(t, u, m, &out);
          return out;
        }
      }
    }
    return {};
  }

 private:
  // Nodes in name order, each taking what it can.
  static int FirstFit(const DomainTree& t, int unit, int r, std::vector<MemberPlan>* out) {
    if (t.IsLeaf(unit)) {
      const int take = std::min(r, t.unit(unit).capacity);
      FromLeaf(t, unit, take, out);
      return take;
    }
    int given = 0;
    for (int c : t.unit(unit).children) {
      if (given == r) break;
      given += FirstFit(t, c, r - given, out);
    }
    return given;
  }
  std::mt19937_64 rng_{kPodSeed};
  const placement::Placer& placer_;
};

}  // namespace

std::vector<std::unique_ptr<GroupPolicy>> AllGroupPolicies(const placement::Placer& placer,
                                                          groups::GroupShapeOptions expected,
                                                          const ClusterShape* shape, bool pod_domain_loss) {
  std::vector<std::unique_ptr<GroupPolicy>> out;
  out.push_back(std::make_unique<TopofitGroups>(placer, expected, shape, pod_domain_loss));
  out.push_back(std::make_unique<NoGang>(placer));
  out.push_back(std::make_unique<KueueBestFit>(placer));
  out.push_back(std::make_unique<VolcanoTier>(placer));
  return out;
}

}  // namespace topofit::bench
