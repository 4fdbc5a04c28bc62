#include "extender/model/model_shortfall.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "extender/model/node_state.h"

namespace topofit::model {

void FreeGpus::Add(uint32_t product, int64_t gpus) {
  total += gpus;
  for (auto& [p, n] : by_product)
    if (p == product) {
      n += gpus;
      return;
    }
  by_product.emplace_back(product, gpus);
}

int64_t FreeGpus::Of(uint32_t product) const {
  for (const auto& [p, n] : by_product)
    if (p == product) return n;
  return 0;
}

bool ModelShortfall::AnyBound(std::span<const PodShape> shapes) {
  for (const PodShape& s : shapes)
    if (s.gpus > 0 && !s.product_ids.empty()) return true;
  return false;
}

ModelShortfall::ModelShortfall(std::span<const PodShape> shapes, const FreeGpus& free, bool spread)
    : free_total_(free.total), spread_(spread) {
  double gpu_weight = 0;
  for (const PodShape& s : shapes)
    if (s.gpus > 0) gpu_weight += s.weight * s.gpus;
  if (gpu_weight <= 0) return;
  // Each bound shape's share of the GPU demand, by the set of models it may use.
  std::unordered_map<uint64_t, double> by_set;
  std::unordered_map<uint64_t, double> by_set_k;  // The same, times the shape's GPU count (variance).
  for (const PodShape& s : shapes) {
    if (s.gpus <= 0 || s.product_ids.empty()) continue;
    uint64_t set = 0;
    bool fits = true;
    for (uint32_t p : s.product_ids) {
      auto it = std::find(models_.begin(), models_.end(), p);
      if (it == models_.end()) {
        if (models_.size() == kMaxModels) {
          fits = false;
          break;
        }
        models_.push_back(p);
        it = models_.end() - 1;
      }
      set |= uint64_t{1} << (it - models_.begin());
    }
    if (!fits) continue;
    by_set[set] += s.weight * s.gpus / gpu_weight;
    by_set_k[set] += s.weight * s.gpus / gpu_weight * s.gpus;
  }
  // Unions of the shapes' sets, closed under union: start from the empty set, add each set to all.
  std::vector<uint64_t> unions{0};
  std::unordered_map<uint64_t, bool> seen{{0, true}};
  for (const auto& [set, share] : by_set) {
    const size_t n = unions.size();
    for (size_t i = 0; i < n && unions.size() < kMaxUnions; ++i) {
      const uint64_t u = unions[i] | set;
      if (seen.emplace(u, true).second) unions.push_back(u);
    }
  }
  std::vector<double> model_free(models_.size());
  for (size_t j = 0; j < models_.size(); ++j) model_free[j] = double(free.Of(models_[j]));
  for (const auto& [set, share] : by_set) {
    Demand d;
    d.share = share;
    d.wanted = share * double(free.total);
    for (size_t j = 0; j < models_.size(); ++j)
      if ((set >> j) & 1) {
        d.products.push_back(models_[j]);
        d.free += free.Of(models_[j]);
      }
    demands_.push_back(std::move(d));
  }
  std::sort(demands_.begin(), demands_.end(), [](const Demand& a, const Demand& b) {
    return a.share != b.share ? a.share > b.share : a.products < b.products;
  });
  for (uint64_t u : unions) {
    if (u == 0) continue;
    Union x{u, 0, 0, 0};
    for (const auto& [set, share] : by_set)
      if ((set & ~u) == 0) {
        x.demand += share;
        x.spread += spread_ ? by_set_k[set] : 0.0;
      }
    for (size_t j = 0; j < models_.size(); ++j)
      if ((u >> j) & 1) x.free += model_free[j];
    unions_.push_back(x);
  }
  now_ = Shortfall(double(free_total_), 0, 0);
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

double ModelShortfall::Shortfall(double total, uint64_t on, double taken) const {
  double worst = 0;
  for (const Union& u : unions_)
    worst = std::max(worst, ExpectedExcess(u.demand * total, u.spread * total, u.free - ((u.models & on) ? taken : 0.0)));
  return worst;
}

double ModelShortfall::Delta(uint32_t product, double k) const {
  if (unions_.empty() || k <= 0) return 0;
  uint64_t on = 0;
  for (size_t j = 0; j < models_.size(); ++j)
    if (models_[j] == product) on = uint64_t{1} << j;
  return Shortfall(double(free_total_) - k, on, k) - Now();
}

std::string DescribeShortfall(const ModelShortfall& shortfall, size_t top) {
  const auto& demands = shortfall.demands();
  if (demands.empty()) return "";
  std::string out = "GPUs model-bound pods will want / free:";
  for (size_t i = 0; i < demands.size() && i < top; ++i) {
    std::string names;
    for (uint32_t p : demands[i].products) names += (names.empty() ? "" : "|") + GpuProductName(p);
    out += fmt::format("{} {} {:.0f}/{}", i == 0 ? "" : ",", names, demands[i].wanted, demands[i].free);
  }
  if (demands.size() > top) out += fmt::format(" (+{} more)", demands.size() - top);
  out += fmt::format("; short {:.0f}", shortfall.Now());
  return out;
}

}  // namespace topofit::model
