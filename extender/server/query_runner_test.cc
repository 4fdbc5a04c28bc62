// QueryRunner: queries run on threads of their own at nice 19, with the caller's deadline.
#include "extender/server/query_runner.h"

#include <doctest/doctest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/work_deadline.h"

namespace topofit::server {
namespace {

TEST_CASE("QueryRunner: runs the query on a thread at nice 19 and returns its reply") {
  QueryRunner runner(2);
  const int caller_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  std::thread::id ran_on;
  int nice = -100;
  Reply r = runner.Run([&] {
    ran_on = std::this_thread::get_id();
    nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    return Reply{200, "answer"};
  });
  CHECK(r.status == 200);
  CHECK(r.body == "answer");
  CHECK(ran_on != std::this_thread::get_id());
  CHECK(nice == kQueryNice);
  CHECK(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == caller_nice);  // The caller is untouched.
}

TEST_CASE("QueryRunner: the caller's deadline and its cancellation hold on the query thread") {
  QueryRunner runner(1);
  std::atomic<bool> cancelled{false};
  std::string seen;
  {
    WorkDeadline d(WorkDeadline::Clock::now() - std::chrono::seconds(1), &cancelled);
    runner.Run([&] { return seen = WorkDeadline::Expired(), Reply{}; });
  }
  CHECK(seen == WorkDeadline::kPassed);
  {
    WorkDeadline d(WorkDeadline::Clock::now() + std::chrono::hours(1), &cancelled);
    cancelled.store(true);
    runner.Run([&] { return seen = WorkDeadline::Expired(), Reply{}; });
  }
  CHECK(seen == WorkDeadline::kCancelled);
  runner.Run([&] { return seen = WorkDeadline::Expired(), Reply{}; });  // No deadline: never expires.
  CHECK(seen.empty());
}

TEST_CASE("QueryRunner: never more queries at once than its threads, the rest wait their turn") {
  QueryRunner runner(2);
  std::atomic<int> running{0}, most{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 6; ++i) {
    callers.emplace_back([&] {
      runner.Run([&] {
        int now = running.fetch_add(1) + 1;
        for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {}
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        running.fetch_sub(1);
        return Reply{};
      });
    });
  }
  for (auto& t : callers) t.join();
  CHECK(most.load() == 2);
}

}  // namespace
}  // namespace topofit::server

namespace topofit::server {
namespace {

TEST_CASE("QueryRunner: charges its CPU budget with the CPU a query used on its thread, and admits none while in debt") {
  QueryRunner runner(1, /*cpu_cores=*/0.05);  // 0.05 CPU-s in the bucket, refilled at 0.05 CPU-s a second.
  REQUIRE(runner.Admit());
  char name[16] = {};
  runner.Run([&] {
    pthread_getname_np(pthread_self(), name, sizeof name);
    const double start = ThisThreadCpuSeconds();
    volatile double x = 0;
    while (ThisThreadCpuSeconds() - start < 0.2) x = x + 1;  // 0.2 CPU-s: 0.15 CPU-s in debt, 3 s to pay back.
    return Reply{200, "done"};
  });
  CHECK(std::string(name) == "query");
  CHECK_FALSE(runner.Admit());
  // A query that sleeps takes no CPU: waiting is not charged (checked on a fresh budget).
  QueryRunner sleeper(1, 0.05);
  sleeper.Run([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return Reply{200, "slept"};
  });
  CHECK(sleeper.Admit());
}

}  // namespace
}  // namespace topofit::server
