#pragma once
// ProductShortfall: the GPUs that pods bound to GPU models will ask for and their models' free GPUs
// cannot give - what a pod that could run anywhere costs when it takes a scarce model's GPUs.
//
// The workload (workload_estimate.h) says which share of the GPUs the coming pods ask for is bound
// to which models: shape s asks for g_s = p_s k_s / sum_t p_t k_t of them and may use the models M_s
// (none named: any). Over the horizon of the GPUs free now, F (pods keep coming until the cluster is
// full), the bound shapes will ask for g_s F GPUs each. Which of that the free GPUs can meet is a
// transport problem; by Hall's theorem what they cannot meet is
//   shortfall(F, free) = max over sets S of models of ( F sum_{s bound, M_s within S} g_s - free(S) ),
// at least 0 (S empty), with free(S) the free GPUs on nodes whose model is in S. The max is reached
// at a union of the shapes' model sets, so only those unions are tried. Placing k GPUs on a node of
// model m changes it by
//   Delta(m, k) = shortfall(F - k, free - k on m) - shortfall(F, free).
// The demand is not known exactly: pods arrive at random. So each union's term is the expected
// excess E[max(0, X_S - free(S))] of a normal X_S with the mean above and the variance of compound
// Poisson arrivals, F sum g_s k_s over the same shapes (spread = false: X_S is exactly its mean, and
// the shortfall the deficiency above). Delta is then about 0 while every model keeps its bound demand
// free with a margin of a sigma or two; up to k (less the pod's own share of the demand) when the pod
// takes GPUs that bound pods will need; below 0 on models no bound pod is short of. In GPUs, like
// FragmentationGradient's frag, to which it is added.
//
// Multi-GPU shapes of any model (topology policy not none) are not bound, but topofit gives each the
// best set, so they take the GPUs of the models whose nodes offer the best ring of their size
// (BestRingProductsOf). Their demand is added to a union's only when bound demand is in it too: there
// it takes what bound pods need; alone it costs nothing, since they could run elsewhere.
//
// Exact for up to 64 distinct models named by bound shapes and 4,096 unions of their sets; past
// that, shapes naming further models and further unions are left out (the shortfall is then a lower
// bound). Not an error: no bound shape (every Delta is 0), a model no node has (its free GPUs are 0).

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "extender/cluster/free_gpus.h"
#include "extender/placement/placer.h"
#include "extender/placement/workload_estimate.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::placement {


// The models a multi-GPU shape of any model goes to for its best ring: those of the node types
// whose whole-node best ring of `gpus` GPUs is the highest (topofit gives such a pod the best set).
struct BestRingProducts {
  int gpus = 0;
  cluster::TopologyPolicy policy = cluster::TopologyPolicy::kBestEffort;
  std::vector<uint32_t> products;
};
std::vector<BestRingProducts> BestRingProductsOf(const Placer& placer, const cluster::FreeGpus& free,
                                             std::span<const PodShape> shapes);

class ProductShortfall {
 public:
  static constexpr size_t kMaxModels = 64;
  static constexpr size_t kMaxUnions = 4096;

  // Whether any shape is bound to GPU models (else the shortfall is 0 and free GPUs need not be counted).
  static bool AnyBound(std::span<const PodShape> shapes);

  // best_rings: where the multi-GPU shapes of any model go (BestRingProductsOf); their demand counts
  // in a set of models only beside bound demand in it. spread false: the demand is exactly its mean
  // (the transport deficiency above, which the tests check against max flow).
  ProductShortfall(std::span<const PodShape> shapes, const cluster::FreeGpus& free,
                 std::span<const BestRingProducts> best_rings = {}, bool spread = true);
  // As scoring weighs it: the best rings found by `placer` on the node types of `free`.
  ProductShortfall(std::span<const PodShape> shapes, const cluster::FreeGpus& free, const Placer& placer)
      : ProductShortfall(shapes, free, BestRingProductsOf(placer, free, shapes)) {}

  // One bound set of models: what its shapes ask for over the horizon against its models' free GPUs.
  struct Demand {
    std::vector<uint32_t> products;  // The set's GPU models (GpuProductId), in first-seen order.
    double share = 0;                // Of the GPUs the workload asks for.
    double wanted = 0;               // share x the cluster's free GPUs.
    int64_t free = 0;                // Free GPUs of the set's models.
    bool best_ring = false;          // Multi-GPU pods of any model there for their best ring.
    std::string Names() const;       // "V100M16|V100M32"
  };
  // Per bound set of models, most wanted first.
  const std::vector<Demand>& demands() const { return demands_; }
  int64_t free_total() const { return free_total_; }

  double Now() const { return now_; }
  // Delta(m, k) above, for k GPUs (fractional: expected) leaving the free GPUs of GPU model `product`.
  double Delta(uint32_t product, double k) const;

 private:
  struct Union {
    uint64_t models;  // Bit j: models_[j].
    double demand;    // sum of g_s over the bound shapes whose models are all in the union.
    double free;      // Free GPUs of the union's models.
    double spread;    // sum of g_s k_s over the same shapes: the demand's variance per free GPU.
  };
  // shortfall with `total` free GPUs in all, `taken` fewer of them on the models `on`.
  double Shortfall(double total, uint64_t on, double taken) const;
  // The constructor's steps. Each shape's share of the demand by the set of models it may use
  // (bound) or goes to for its best ring (a multi-GPU shape of any model).
  struct ShapeSets;
  ShapeSets ShareBySet(std::span<const PodShape> shapes, double gpu_weight,
                       std::span<const BestRingProducts> best_rings);
  // The bit set of `products` over models_, adding the models not seen yet; false when empty or
  // when a model would be past kMaxModels.
  bool MaskOf(const std::vector<uint32_t>& products, uint64_t* set);
  // demands_, most wanted first.
  void AddDemands(const ShapeSets& sets, const cluster::FreeGpus& free);
  // unions_: every union of the sets with bound demand in it, its demand, spread and free GPUs.
  void AddUnions(const ShapeSets& sets, const cluster::FreeGpus& free);

  std::vector<Demand> demands_;
  std::vector<uint32_t> models_;  // Product ids named by bound shapes.
  std::vector<Union> unions_;
  int64_t free_total_ = 0;
  bool spread_ = true;
  double now_ = 0;
};

// One line for explain and GET /api/v1/workload: "GPUs model-bound pods will want / free: T4 297/842,
// P100 180/265, V100M16|V100M32 46/399; short 0", at most `top` sets, most wanted first; "" when no
// shape is bound to a model.
std::string DescribeShortfall(const ProductShortfall& shortfall, size_t top = 4);

}  // namespace topofit::placement
