#pragma once
// SelectHost: how kube-scheduler picks among scored nodes (selectHost in its schedule_one.go). The
// highest total wins; equal totals are broken uniformly at random by reservoir sampling in the order
// the nodes come: the k-th node tied at the top (k >= 2) takes the pick when a uniform draw from
// 0..k-1 is 0.
//
// Contract: `score(i)` is called once for each i in [0, n), in order; `rng` is drawn once for each
// tie after the first and never otherwise, so two runs that see the same scores in the same order
// draw the same numbers - the in-process and over-HTTP topofit policies rely on this to place every
// pod alike. Returns the index of the chosen node, or -1 when n is 0.

#include <cstddef>
#include <cstdint>
#include <random>

namespace topofit::bench {

template <typename ScoreFn>
int SelectHost(size_t n, ScoreFn&& score, std::mt19937_64& rng) {
  int best = -1, ties = 0;
  int64_t best_score = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = score(i);
    if (best < 0 || s > best_score) {
      best = int(i);
      best_score = s;
      ties = 1;
    } else if (s == best_score) {
      ++ties;
      if (std::uniform_int_distribution<int>(0, ties - 1)(rng) == 0) best = int(i);
    }
  }
  return best;
}

}  // namespace topofit::bench
