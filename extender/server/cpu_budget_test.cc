#include "extender/server/cpu_budget.h"

#include <doctest/doctest.h>

namespace topofit::server {
namespace {

using std::chrono::milliseconds;

TEST_CASE("cpu budget: admits while not in debt, charges what was used, refills at its rate up to one second's worth") {
  const auto t0 = CpuBudget::Clock::time_point{} + std::chrono::hours(1);
  CpuBudget budget(0.25, t0);
  CHECK(budget.Admit(t0));
  budget.Charge(0.5, t0);  // One piece overdraws: 0.25 - 0.5 = -0.25 CPU-s.
  CHECK_FALSE(budget.Admit(t0));
  CHECK_FALSE(budget.Admit(t0 + milliseconds(999)));  // -0.25 + 0.2498: still in debt.
  CHECK(budget.Admit(t0 + milliseconds(1001)));       // Paid back after 1 s at 0.25 cores.
  // An idle hour refills one second's worth, not an hour's: 0.25 CPU-s, then debt again.
  const auto later = t0 + std::chrono::hours(2);
  CHECK(budget.Admit(later));
  budget.Charge(0.3, later);
  CHECK_FALSE(budget.Admit(later));
}

TEST_CASE("cpu budget: over a long stretch the work admitted takes the rate, whatever it asks") {
  const auto t0 = CpuBudget::Clock::time_point{} + std::chrono::hours(1);
  CpuBudget budget(0.25, t0);
  double used = 0;
  for (int ms = 0; ms < 60'000; ms += 10) {  // A flood: a 0.1 CPU-s piece asked for every 10 ms for 60 s.
    auto now = t0 + milliseconds(ms);
    if (budget.Admit(now)) {
      budget.Charge(0.1, now);
      used += 0.1;
    }
  }
  CHECK(used <= 0.25 * 60 + 0.25 + 0.1);  // The rate, the first second's worth, one overdraw.
  CHECK(used >= 0.25 * 60 - 0.1);
}

TEST_CASE("cpu budget: a rate of 0 admits nothing") {
  CpuBudget none(0);
  CHECK_FALSE(none.Admit());
}

}  // namespace
}  // namespace topofit::server
