#include "extender/placement/product_shortfall.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "extender/cluster/node_state.h"

namespace topofit::placement {

bool ProductShortfall::AnyBound(std::span<const PodShape> shapes) {
  for (const PodShape& s : shapes)
    if (s.gpus > 0 && !s.product_ids.empty()) return true;
  return false;
}

namespace {

// By set of models (a bit per ProductShortfall::models_ entry): the share of the GPU demand of the
// shapes with that set, and that share times their GPU count (for the variance).
using ModelSetShares = std::unordered_map<uint64_t, std::pair<double, double>>;

// What the shapes asking for GPUs weigh in GPUs: sum of p_s k_s.
double GpuWeight(std::span<const PodShape> shapes) {
  double gpu_weight = 0;
  for (const PodShape& s : shapes)
    if (s.gpus > 0) gpu_weight += s.weight * s.gpus;
  return gpu_weight;
}

// The sets' unions, closed under union: from the empty set, each set added to all found so far,
// at most ProductShortfall::kMaxUnions of them.
std::vector<uint64_t> UnionsOf(const ModelSetShares& bound, const ModelSetShares& best_ring) {
  std::vector<uint64_t> unions{0};
  std::unordered_map<uint64_t, bool> seen{{0, true}};
  for (const auto* group : {&bound, &best_ring})
    for (const auto& [set, share] : *group) {
      const size_t n = unions.size();
      for (size_t i = 0; i < n && unions.size() < ProductShortfall::kMaxUnions; ++i) {
        const uint64_t u = unions[i] | set;
        if (seen.emplace(u, true).second) unions.push_back(u);
      }
    }
  return unions;
}

}  // namespace

struct ProductShortfall::ShapeSets {
  ModelSetShares bound;      // Shapes bound to GPU models, by their models.
  ModelSetShares best_ring;  // Multi-GPU shapes of any model, by the models of their best ring.
};

ProductShortfall::ProductShortfall(std::span<const PodShape> shapes, const cluster::FreeGpus& free,
                               std::span<const BestRingProducts> best_rings, bool spread)
    : free_total_(free.total), spread_(spread) {
  const double gpu_weight = GpuWeight(shapes);
  if (gpu_weight <= 0 || !AnyBound(shapes)) return;
  const ShapeSets sets = ShareBySet(shapes, gpu_weight, best_rings);
  AddDemands(sets, free);
  AddUnions(sets, free);
  now_ = Shortfall(double(free_total_), 0, 0);
}

bool ProductShortfall::MaskOf(const std::vector<uint32_t>& products, uint64_t* set) {
  *set = 0;
  for (uint32_t p : products) {
    auto it = std::find(models_.begin(), models_.end(), p);
    if (it == models_.end()) {
      if (models_.size() == kMaxModels) return false;
      models_.push_back(p);
      it = models_.end() - 1;
    }
    *set |= uint64_t{1} << (it - models_.begin());
  }
  return *set != 0;
}

ProductShortfall::ShapeSets ProductShortfall::ShareBySet(std::span<const PodShape> shapes, double gpu_weight,
                                                         std::span<const BestRingProducts> best_rings) {
  ShapeSets sets;
  for (const PodShape& s : shapes) {
    if (s.gpus <= 0) continue;
    const double share = s.weight * s.gpus / gpu_weight;
    uint64_t set = 0;
    if (!s.product_ids.empty()) {
      if (!MaskOf(s.product_ids, &set)) continue;
      sets.bound[set].first += share;
      sets.bound[set].second += share * s.gpus;
      continue;
    }
    if (s.gpus < 2 || s.policy == cluster::TopologyPolicy::kNone) continue;
    for (const BestRingProducts& b : best_rings)
      if (b.gpus == s.gpus && b.policy == s.policy && MaskOf(b.products, &set)) {
        sets.best_ring[set].first += share;
        sets.best_ring[set].second += share * s.gpus;
      }
  }
  return sets;
}

void ProductShortfall::AddDemands(const ShapeSets& sets, const cluster::FreeGpus& free) {
  for (const auto* group : {&sets.bound, &sets.best_ring})
    for (const auto& [set, share] : *group) {
      Demand d;
      d.share = share.first;
      d.wanted = share.first * double(free.total);
      d.best_ring = group == &sets.best_ring;
      for (size_t j = 0; j < models_.size(); ++j)
        if ((set >> j) & 1) {
          d.products.push_back(models_[j]);
          d.free += free.Of(models_[j]);
        }
      demands_.push_back(std::move(d));
    }
  std::sort(demands_.begin(), demands_.end(), [](const Demand& a, const Demand& b) {
    if (a.best_ring != b.best_ring) return b.best_ring;
    return a.share != b.share ? a.share > b.share : a.products < b.products;
  });
}

void ProductShortfall::AddUnions(const ShapeSets& sets, const cluster::FreeGpus& free) {
  std::vector<double> model_free(models_.size());
  for (size_t j = 0; j < models_.size(); ++j) model_free[j] = double(free.Of(models_[j]));
  for (uint64_t u : UnionsOf(sets.bound, sets.best_ring)) {
    Union x{u, 0, 0, 0};
    bool bound = false;  // Best-ring demand counts only beside bound demand it competes with.
    for (const auto* group : {&sets.bound, &sets.best_ring})
      for (const auto& [set, share] : *group)
        if ((set & ~u) == 0) {
          bound |= group == &sets.bound;
          x.demand += share.first;
          x.spread += spread_ ? share.second : 0.0;
        }
    if (!bound) continue;
    for (size_t j = 0; j < models_.size(); ++j)
      if ((u >> j) & 1) x.free += model_free[j];
    unions_.push_back(x);
  }
}

std::vector<BestRingProducts> BestRingProductsOf(const Placer& placer, const cluster::FreeGpus& free,
                                             std::span<const PodShape> shapes) {
  std::vector<BestRingProducts> out;
  for (const PodShape& s : shapes) {
    if (s.gpus < 2 || s.policy == cluster::TopologyPolicy::kNone || !s.product_ids.empty()) continue;
    bool done = false;
    for (const BestRingProducts& b : out) done |= b.gpus == s.gpus && b.policy == s.policy;
    if (done) continue;
    BestRingProducts b{s.gpus, s.policy, {}};
    uint32_t best = 0;
    const cluster::PodIntent intent{s.policy, std::nullopt};
    for (const cluster::FreeGpus::NodeType& t : free.types) {
      if (!t.topology || t.usable.size() < s.gpus) continue;
      const PlacerChoice whole = placer.Choose(*t.topology, t.usable, s.gpus, intent);
      if (!whole.found || whole.ring_mbps < best) continue;
      if (whole.ring_mbps > best) b.products.clear();
      best = whole.ring_mbps;
      if (std::find(b.products.begin(), b.products.end(), t.product) == b.products.end()) b.products.push_back(t.product);
    }
    if (!b.products.empty()) out.push_back(std::move(b));
  }
  return out;
}

namespace {

// E[max(0, X - f)] for X normal with mean mu and variance var (var 0: max(0, mu - f)).
double ExpectedExcess(double mu, double var, double f) {
  if (var <= 0) return std::max(0.0, mu - f);
  const double sigma = std::sqrt(var), z = (mu - f) / sigma;
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * 3.14159265358979323846);
  return std::max(0.0, (mu - f) * cdf + sigma * pdf);
}

}  // namespace

double ProductShortfall::Shortfall(double total, uint64_t on, double taken) const {
  double worst = 0;
  for (const Union& u : unions_)
    worst = std::max(worst, ExpectedExcess(u.demand * total, u.spread * total, u.free - ((u.models & on) ? taken : 0.0)));
  return worst;
}

double ProductShortfall::Delta(uint32_t product, double k) const {
  if (unions_.empty() || k <= 0) return 0;
  uint64_t on = 0;
  for (size_t j = 0; j < models_.size(); ++j)
    if (models_[j] == product) on = uint64_t{1} << j;
  return Shortfall(double(free_total_) - k, on, k) - Now();
}

std::string ProductShortfall::Demand::Names() const {
  std::string out;
  for (uint32_t p : products) out += (out.empty() ? "" : "|") + cluster::GpuProductName(p);
  return out;
}

std::string DescribeShortfall(const ProductShortfall& shortfall, size_t top) {
  const auto& demands = shortfall.demands();
  if (demands.empty()) return "";
  std::string out = "GPUs model-bound pods will want / free:";
  for (size_t i = 0; i < demands.size() && i < top; ++i) {
    const std::string names = (demands[i].best_ring ? "best rings on " : "") + demands[i].Names();
    out += fmt::format("{} {} {:.0f}/{}", i == 0 ? "" : ",", names, demands[i].wanted, demands[i].free);
  }
  if (demands.size() > top) out += fmt::format(" (+{} more)", demands.size() - top);
  out += fmt::format("; short {:.0f}", shortfall.Now());
  return out;
}

}  // namespace topofit::placement
