#pragma once
// The score plugins; the formula that combines them is in pipeline_config.h. Each returns a value in
// [0, 1], higher is better; a new scoring idea is a new class here plus a weight in the config.

#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/placement/plugin.h"
#include "extender/placement/product_shortfall.h"

namespace topofit::placement {

// Every built-in score plugin, in scoring order: what a Pipeline chooses from unless it is given its
// own list. PipelineConfig::weights enables a plugin by its Name(); a plugin with no weight is not
// run. To add a built-in, list it in score_plugins.cc.
std::vector<std::unique_ptr<ScorePlugin>> AllScorePlugins();

// SetQuality: how good the set this node offers is, relative to the best the pod could get on any
// node of the request: ring(set) / max ring under the lexicographic rule (interconnect rate +inf);
// with a finite rate FragmentationGradient prices the ring and SetQuality is 1. 1 for 1-GPU pods
// (every single GPU is as good) and for policy none; halved when a best-effort pod's set misses its
// min-link.
class SetQualityScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "SetQuality"; }
  bool ReadsResources() const override { return false; }
  void PreScore(CycleState& state, std::span<const NodeView> nodes,
                std::span<const PlacerChoice> candidates) const override;
  double Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const override;
};

// Packing: prefer filling partly used nodes, so whole nodes stay free for big pods:
// (usable - free + k) / usable.
class PackingScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "Packing"; }
  bool ReadsResources() const override { return false; }
  double Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const override;
};

// Fragmentation: prefer placements that keep the node useful for the expected request mix (whole
// NVLink islands free): 1 - (Future(free) - Future(free - set)) / Future(usable).
class FragmentationScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "Fragmentation"; }
  bool ReadsResources() const override { return false; }
  double Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const override;
};

// Stranding: keep free GPUs usable. A GPU is only worth something while its node still has CPU and
// memory for a pod to run beside it; with kube-scheduler spreading CPU and memory (LeastAllocated)
// and CPU-only pods landing on GPU nodes, GPUs end up free on nodes whose CPU or memory is used up.
//   d_cpu = allocatable CPU / usable GPUs, d_mem likewise  (what one GPU of this node comes with)
//   backed(g, cpu, mem) = min(g, cpu / d_cpu, mem / d_mem)   (free GPUs still backed; a dimension
//                                                              with no allocatable figure is ignored)
//   waste = backed(before) - backed(after placing the pod) - k     (k = GPUs the pod takes)
//   s = clamp(0.5 - waste / (2k), 0, 1)
// A pod that uses its GPUs' share of CPU and memory wastes nothing (0.5, on every node alike). A pod
// hungrier than its share destroys more backed GPUs than it takes (s < 0.5), least so on a node whose
// CPU and memory are plentiful; a frugal pod on a node short of CPU or memory takes GPUs that no
// average pod could use (waste < 0, s > 0.5), which is where such a pod should go.
class StrandingScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "Stranding"; }
  bool ReadsResources() const override { return true; }
  double Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const override;
};

// FragmentationGradient: place where the cluster loses least of what its coming pods can use - the
// Fragmentation Gradient Descent rule of Weng et al. (USENIX ATC'23), over topofit's own node model.
// The workload is the running estimate of the pods seen (CycleState::workload, workload_estimate.h):
// shapes s with share p_s, k_s GPUs, CPU c_s, memory m_s, allowed GPU models, topology policy.
// On a node with free GPUs F, free CPU C and memory M, a shape s can use the free GPUs when it fits:
//   fits_s = the node's GPU model is among s's (or s allows any), k_s <= |F|, c_s <= C, m_s <= M,
//            and, for a `required` s, F holds a set of k_s meeting its min-link
//   q_s    = best ring of k_s GPUs in F / best ring of k_s GPUs on the whole node
//            (1 for k_s = 1 and policy none): a free set is worth what its best ring offers
//   frag   = sum_s p_s |F| (1 - q_s [fits_s])      free GPUs a pod drawn from the workload can't use
//   delta = frag(after placing the pod on its set) - frag(before)         (may be negative)
//           + shortfall's change: the GPUs that model-bound shapes will ask for and their models' free
//             GPUs cannot give (product_shortfall.h; 0 when no shape is bound to a model)
//   price = for a multi-GPU pod (policy not none) on a node whose set is slower than the best any
//           node offers: R k (1 - ring here / best ring), R = CycleState::interconnect_rate (GPUs of
//           fragmentation per GPU of the pod, pipeline_config.h); 0 otherwise
//   s     = clamp(0.5 - (delta + price) / (2 (G + R k)), 0, 1), G = the most usable GPUs of any node
//           scored, so that delta compares across node sizes (R k counted only for multi-GPU pods);
//           with R = +inf, 0 on a slower set, so that with SetQuality beside it every node of the
//           best set ranks above every other (the lexicographic rule).
// This is the paper's whole-GPU definition (a shape that fits can use every free GPU) plus ring
// quality. It reads CPU and memory (it subsumes Stranding: GPUs left without CPU or memory for a pod
// count as lost), keeps free sets for the sizes in demand (Fragmentation) and fills nodes whose
// leftovers no pod of the workload can use (Packing). frag alone is per node: it counts a T4's free GPUs
// as wasted on the pods bound to other models, so it fills the T4 nodes first with pods that could run
// anywhere, and the T4-bound pods that come later fail; the shortfall term weighs each model's
// bound demand against its free GPUs across the cluster. Without a workload estimate (no pod seen) the pod itself
// is the workload.
class FragmentationGradientScore final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "FragmentationGradient"; }
  bool ReadsResources() const override { return true; }
  void PreScore(CycleState& state, std::span<const NodeView> nodes,
                std::span<const PlacerChoice> candidates) const override;
  double Score(const CycleState& state, const NodeView& node, const PlacerChoice& c) const override;
  // frag before and after placing the cycle's pod on `c`, in GPUs, the shortfall's change included in
  // after (for tests and explain).
  static std::pair<double, double> Frag(const CycleState& state, const NodeView& node, const PlacerChoice& c);
  // The price of c's ring, in GPUs (+inf on a slower set under the lexicographic rule).
  static double Price(const CycleState& state, const PlacerChoice& c);
  // Both sides of the trade on the node: frag's change (shortfall included) and the price, in GPUs.
  static std::pair<double, double> Trade(const CycleState& state, const NodeView& node, const PlacerChoice& c);
};

// FragmentationGradientScore's tables for one cycle: per workload shape, and per GPU state of the
// nodes scored (topology, free, GPU model) the GPU-side terms n and q before and after.
struct FragmentationCycle {
  struct Shape {
    double weight;
    int k;
    double inv_cpu, inv_mem;  // 1 / request; 0 when not requested.
    uint32_t group;           // Index into groups.
  };
  struct Group {              // Shapes of one GPU count and policy share their GPU-side terms.
    int k;
    cluster::TopologyPolicy policy;
  };
  struct Terms {
    int free_before, free_after;
    uint64_t allowed = 0;     // Bit j: shape j may use this node's GPU model.
    double shortfall_delta = 0;  // ProductShortfall::Delta for the pod's GPUs on this node's model.
    uint32_t at = 0;             // Its n and q in `values` (Of): no allocation per GPU state.
  };
  // n and q per group, before or after the pod takes its set; n > 0: k GPUs (meeting the policy) fit.
  enum Part : uint32_t { kNBefore, kQBefore, kNAfter, kQAfter };
  struct Key {
    const Topology* topology;
    uint64_t free;
    uint32_t product;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (reinterpret_cast<uintptr_t>(k.topology) >> 4) ^ (k.free * 0x9E3779B97F4A7C15ull) ^
                   (uint64_t(k.product) << 40);
      return h ^ (h >> 29);
    }
  };
  std::vector<Shape> shapes;  // At most 64.
  std::vector<Group> groups;
  double scale = 1;           // 1 / (2 G), or 1 / (2 (G + R k)) for a multi-GPU pod under a finite R
  int most_gpus = 1;          // G
  uint32_t best_ring_mbps = 0;

  // The Terms of each GPU state, in a flat table: a prioritize makes some hundreds of them, and a
  // node-based map's allocations (with four vectors per Terms) were a visible share of a 5,000-node call.
  void Reserve(size_t states);                    // Room for this many states without regrowing.
  std::pair<Terms*, bool> Add(const Key& key);    // The key's Terms (a new one zeroed), and whether new;
                                                  // the pointer lives until the next Add.
  const Terms* Find(const Key& key) const;        // nullptr: never added.
  std::vector<float> values;  // Every Terms' four parts, groups.size() floats each, from Terms::at.
  float* Of(const Terms& t, Part part) { return values.data() + t.at + part * groups.size(); }
  const float* Of(const Terms& t, Part part) const { return values.data() + t.at + part * groups.size(); }

 private:
  size_t SlotOf(const Key& key) const;  // The slot holding key, or the empty one where it would go.
  std::vector<std::pair<Key, Terms>> entries_;
  std::vector<uint32_t> slots_;         // Open addressing, linear probing: entries_ index + 1; 0 is empty.
};

}  // namespace topofit::placement
