#include "base/work_deadline.h"

#include <doctest/doctest.h>

#include <thread>

namespace topofit {

TEST_CASE("work deadline: none installed never expires, a passed deadline and a cancel flag do") {
  using Clock = WorkDeadline::Clock;
  CHECK(WorkDeadline::Expired().empty());
  std::atomic<bool> cancelled{false};
  {
    WorkDeadline d(Clock::now() + std::chrono::hours(1), &cancelled);
    CHECK(WorkDeadline::Expired().empty());
    cancelled = true;
    CHECK(WorkDeadline::Expired() == WorkDeadline::kCancelled);
    cancelled = false;
    {
      WorkDeadline inner(Clock::now() - std::chrono::milliseconds(1), nullptr);
      CHECK(WorkDeadline::Expired() == WorkDeadline::kPassed);
    }
    CHECK(WorkDeadline::Expired().empty());  // The outer one rules again.
    // Per thread: another thread has none.
    bool other_expired = true;
    std::thread([&] { other_expired = !WorkDeadline::Expired().empty(); }).join();
    CHECK_FALSE(other_expired);
  }
  CHECK(WorkDeadline::Expired().empty());
}

}  // namespace topofit
