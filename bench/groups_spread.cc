#include "bench/groups_spread.h"

#include <algorithm>
#include <limits>
#include <random>

#include <fmt/format.h>

namespace topofit::bench {
namespace {

struct Values {
  double unallocated = 0, one_domain = 0, placed = 0;
};

double Ratio(int64_t mine, int64_t theirs) {
  return theirs > 0 ? static_cast<double>(mine) / theirs : (mine > 0 ? std::numeric_limits<double>::infinity() : 1.0);
}

// The targets' values on the seeds `picked` (indices into by_seed, repeats allowed).
Values Targets(const std::vector<GroupReplayRow>& rows, size_t topofit, const std::vector<size_t>& picked) {
  auto sum = [&](const GroupReplayRow& r, auto field) {
    int64_t s = 0;
    for (size_t k : picked) s += r.by_seed[k].*field;
    return s;
  };
  int64_t best_unallocated = std::numeric_limits<int64_t>::max(), most_one_domain = 0, most_placed = 0;
  for (size_t p = 0; p < rows.size(); ++p) {
    if (p == topofit) continue;
    if (rows[p].gang) {
      best_unallocated = std::min(best_unallocated, sum(rows[p], &SeedCounts::unallocated));
      most_placed = std::max(most_placed, sum(rows[p], &SeedCounts::gpus_placed));
    }
    most_one_domain = std::max(most_one_domain, sum(rows[p], &SeedCounts::one_domain));
  }
  const GroupReplayRow& me = rows[topofit];
  return {Ratio(sum(me, &SeedCounts::unallocated), best_unallocated),
          static_cast<double>(sum(me, &SeedCounts::one_domain) - most_one_domain),
          Ratio(sum(me, &SeedCounts::gpus_placed), most_placed)};
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return QuantileOf(v, q);
}

}  // namespace

Result<TargetSpread> SpreadOverSeeds(const std::vector<GroupReplayRow>& rows, int resamples, uint64_t rng_seed) {
  const auto topofit = std::find_if(rows.begin(), rows.end(), [](const GroupReplayRow& r) { return r.policy == "topofit"; });
  if (topofit == rows.end()) return Error{"no topofit row"};
  const size_t seeds = topofit->by_seed.size();
  if (seeds == 0 || resamples < 1) return Error{"no seeds, or no resamples"};
  bool baseline = false;
  for (const GroupReplayRow& r : rows) {
    if (r.by_seed.size() != seeds) return Error{fmt::format("{} has {} seeds, topofit {}", r.policy, r.by_seed.size(), seeds)};
    baseline |= r.gang && &r != &*topofit;
  }
  if (!baseline) return Error{"no gang baseline"};
  const size_t me = static_cast<size_t>(topofit - rows.begin());
  std::vector<size_t> all(seeds);
  for (size_t k = 0; k < seeds; ++k) all[k] = k;
  TargetSpread out;
  const Values sums = Targets(rows, me, all);
  out.unallocated_ratio = sums.unallocated;
  out.one_domain_more = sums.one_domain;
  out.placed_ratio = sums.placed;
  std::mt19937_64 rng(rng_seed);
  std::uniform_int_distribution<size_t> pick(0, seeds - 1);
  std::vector<double> ratios, mores, placed;
  std::vector<size_t> picked(seeds);
  for (int b = 0; b < resamples; ++b) {
    for (size_t& k : picked) k = pick(rng);
    const Values v = Targets(rows, me, picked);
    ratios.push_back(v.unallocated);
    mores.push_back(v.one_domain);
    placed.push_back(v.placed);
  }
  out.unallocated_lo = Quantile(ratios, 0.025);
  out.unallocated_hi = Quantile(ratios, 0.975);
  out.one_domain_lo = Quantile(mores, 0.025);
  out.one_domain_hi = Quantile(mores, 0.975);
  out.placed_lo = Quantile(placed, 0.025);
  out.placed_hi = Quantile(placed, 0.975);
  return out;
}

std::string FormatTargetSpread(const GroupReplayOptions& o, const TargetSpread& s) {
  return fmt::format("| {:.2f}, {} {} | {:.2f} [{:.2f}, {:.2f}] | {:+.0f} [{:+.0f}, {:+.0f}] | {:.3f} [{:.3f}, {:.3f}] |\n",
                     o.load, o.shape, o.mix, s.unallocated_ratio, s.unallocated_lo, s.unallocated_hi, s.one_domain_more,
                     s.one_domain_lo, s.one_domain_hi, s.placed_ratio, s.placed_lo, s.placed_hi);
}

}  // namespace topofit::bench
