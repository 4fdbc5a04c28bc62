// SpreadOverSeeds on hand-made rows: the targets' sums, the bootstrap's percentiles, which policies
// each target compares with, and what it refuses.
#include "bench/groups_spread.h"

#include <doctest/doctest.h>

namespace topofit::bench {
namespace {

GroupReplayRow Row(const std::string& policy, bool gang, std::vector<SeedCounts> seeds) {
  GroupReplayRow r;
  r.policy = policy;
  r.gang = gang;
  r.by_seed = std::move(seeds);
  return r;
}

TEST_CASE("spread over seeds: seeds alike give the sums' values, with no spread") {
  const std::vector<GroupReplayRow> rows = {Row("topofit", true, {{10, 5, 90}, {10, 5, 90}, {10, 5, 90}, {10, 5, 90}}),
                                            Row("no-gang", false, {{0, 1, 500}, {0, 1, 500}, {0, 1, 500}, {0, 1, 500}}),
                                            Row("kueue-bestfit", true, {{20, 4, 80}, {20, 4, 80}, {20, 4, 80}, {20, 4, 80}}),
                                            Row("volcano-tier", true, {{30, 2, 60}, {30, 2, 60}, {30, 2, 60}, {30, 2, 60}})};
  const auto s = SpreadOverSeeds(rows);
  REQUIRE(s.ok());
  // no-gang's 0 unallocated is not a gang baseline's; its one-domain count is a baseline's.
  CHECK(s->unallocated_ratio == doctest::Approx(0.5));
  CHECK(s->unallocated_lo == doctest::Approx(0.5));
  CHECK(s->unallocated_hi == doctest::Approx(0.5));
  CHECK(s->one_domain_more == doctest::Approx(4));  // 20 - 16.
  CHECK(s->one_domain_lo == doctest::Approx(4));
  CHECK(s->one_domain_hi == doctest::Approx(4));
  CHECK(s->placed_ratio == doctest::Approx(90.0 / 80));  // no-gang's 500 is not a gang baseline's.
  CHECK(s->placed_lo == doctest::Approx(90.0 / 80));
}

TEST_CASE("spread over seeds: seeds that disagree give an interval around the sums' value") {
  std::vector<SeedCounts> mine, theirs, other;
  for (int k = 0; k < 20; ++k) {
    mine.push_back({k % 2 ? 100 : 0, k % 2 ? 3 : 1});
    theirs.push_back({50, 2});
    other.push_back({60, 2});
  }
  const std::vector<GroupReplayRow> rows = {Row("topofit", true, mine), Row("kueue-bestfit", true, theirs),
                                            Row("volcano-tier", true, other)};
  const auto s = SpreadOverSeeds(rows);
  REQUIRE(s.ok());
  CHECK(s->unallocated_ratio == doctest::Approx(1.0));  // 1,000 over 1,000.
  CHECK(s->unallocated_lo < 0.8);
  CHECK(s->unallocated_hi > 1.2);
  CHECK(s->one_domain_more == doctest::Approx(0));
  CHECK(s->one_domain_lo < 0);
  CHECK(s->one_domain_hi > 0);
  const auto again = SpreadOverSeeds(rows);  // The same resamples.
  REQUIRE(again.ok());
  CHECK(again->unallocated_lo == s->unallocated_lo);
  CHECK(again->one_domain_hi == s->one_domain_hi);
}

TEST_CASE("spread over seeds: the best gang baseline is chosen again in each resample") {
  // kueue is better on the first 10 seeds, volcano on the last 10; topofit equals the better one on
  // each seed, so every resample's ratio is at most 1, and the sums' ratio is below 1.
  std::vector<SeedCounts> mine, kueue, volcano;
  for (int k = 0; k < 20; ++k) {
    kueue.push_back({k < 10 ? 10 : 30, 0});
    volcano.push_back({k < 10 ? 30 : 10, 0});
    mine.push_back({10, 0});
  }
  const auto s = SpreadOverSeeds(
      {Row("topofit", true, mine), Row("kueue-bestfit", true, kueue), Row("volcano-tier", true, volcano)});
  REQUIRE(s.ok());
  CHECK(s->unallocated_ratio == doctest::Approx(0.5));  // 200 over 400.
  CHECK(s->unallocated_hi <= 1.0);
}

TEST_CASE("spread over seeds: refused without topofit, a gang baseline, or the same seeds everywhere") {
  CHECK_FALSE(SpreadOverSeeds({Row("kueue-bestfit", true, {{1, 1}})}).ok());
  CHECK_FALSE(SpreadOverSeeds({Row("topofit", true, {{1, 1}}), Row("no-gang", false, {{1, 1}})}).ok());
  CHECK_FALSE(SpreadOverSeeds({Row("topofit", true, {{1, 1}}), Row("kueue-bestfit", true, {{1, 1}, {1, 1}})}).ok());
  CHECK_FALSE(SpreadOverSeeds({Row("topofit", true, {}), Row("kueue-bestfit", true, {})}).ok());
}

}  // namespace
}  // namespace topofit::bench
