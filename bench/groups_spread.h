#pragma once
// How far the seeds move the two placement targets of issue 28 (docs/groups.md, "The targets over
// seeds"): a bootstrap over the seeds of a groups replay (groups_replay.h), so that a verdict comes
// with the spread it stands on, not a sum alone.
//   unallocated  topofit's unallocated GPUs at capacity over the best gang baseline's (the fewest of
//                the policies that place a group whole: not no-gang), sums over the seeds; the target
//                is at most 0.8.
//   one domain   topofit's spanning groups inside one lowest domain minus the most of any baseline's
//                (no-gang included), sums over the seeds; the target is more than 0.
//   GPUs placed  not a target: topofit's GPUs of the groups given every member over the most of a gang
//                baseline's - a policy that places fewer groups may place more GPUs (larger jobs).
// Each with the 2.5th and 97.5th percentiles over `resamples` resamplings of the seeds with
// replacement (the seeds paired across the policies: every policy of a resample gets the same seeds),
// the best baseline chosen again in each. Deterministic: the resamples are drawn from `rng_seed`.
// Needs a row named "topofit" and at least one gang baseline, each with one entry per seed
// (GroupReplayRow::by_seed); an error otherwise.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/groups_replay.h"

namespace topofit::bench {

struct TargetSpread {
  double unallocated_ratio = 0, unallocated_lo = 0, unallocated_hi = 0;
  double one_domain_more = 0, one_domain_lo = 0, one_domain_hi = 0;
  double placed_ratio = 0, placed_lo = 0, placed_hi = 0;
};

Result<TargetSpread> SpreadOverSeeds(const std::vector<GroupReplayRow>& rows, int resamples = 2000,
                                     uint64_t rng_seed = 1);

// One markdown line per workload: "| load, shape mix | ratio [lo, hi] | more [lo, hi] | ratio [lo, hi] |".
std::string FormatTargetSpread(const GroupReplayOptions& options, const TargetSpread& spread);

}  // namespace topofit::bench
