#pragma once
// QueryRunner: where the queries (/api/v1/...: explain, nodes, the web view's lists) run - threads of
// their own at the lowest CPU priority (nice 19), so that a query over every node (explain is about
// half a CPU-second on 5,000 nodes) takes only the CPU that filter, prioritize, bind and preempt leave
// (docs/hostile-input.md measures a flood of explains). Its threads also keep what queries allocate
// in their own few malloc arenas instead of in every worker's.
//
// Nice applies among the threads of one CPU cgroup (a container): what a query yields to is
// topofit's own verbs, not other pods. On a machine saturated by other processes of the same cgroup a
// query may run into its deadline and be answered 503.
//
// They also run within a CPU budget (cpu_budget.h): on average at most `cores` of CPU. Admit() says
// whether one may start now; Run() charges the budget with the CPU its function used on the query
// thread. Callers refuse a query that is not admitted (HttpServer: a 503 with Retry-After).
//
// What the process freed is handed back to the system (malloc_trim) once a second by a thread of
// its own at the process's priority, so that a flood of queries or connections does not grow the RSS.
//
// Contract: Run() blocks the calling thread until the function has run on a query thread, with the
// caller's WorkDeadline (base/work_deadline.h) installed there; it never runs more than `threads`
// functions at once (more wait their turn: callers cap queries themselves). A nice that cannot be
// set (it always can be raised on Linux) leaves the thread at the process's priority. Thread-safe.
// The destructor runs what is queued, then joins.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "extender/server/cpu_budget.h"
#include "extender/server/reply.h"

namespace topofit::server {

inline constexpr int kQueryNice = 19;
// The queries' CPU budget, in cores, by this procedure: one explain over every node of the cluster
// size the verbs are measured at (5,000 nodes, docs/performance.md) a second. Such an explain costs
// about 0.25 CPU-s (hostile_load's `query` thread CPU over the explains answered 200,
// docs/hostile-input.md). That serves people, `kubectl topofit` and the web view's polls
// (milliseconds each); a flood gets 503s instead of the verbs' CPU.
inline constexpr double kQueryCpuCores = 0.25;

class QueryRunner {
 public:
  // cpu_cores <= 0: no CPU budget (every query admitted).
  explicit QueryRunner(int threads, double cpu_cores = kQueryCpuCores);
  ~QueryRunner();
  QueryRunner(const QueryRunner&) = delete;
  QueryRunner& operator=(const QueryRunner&) = delete;

  // Whether a query may start now: the CPU budget is not in debt.
  bool Admit() { return unlimited_ || budget_.Admit(); }
  Reply Run(const std::function<Reply()>& query);

 private:
  void Work();
  void Trim();

  static constexpr std::chrono::seconds kTrimInterval{1};

  CpuBudget budget_;
  const bool unlimited_;  // cpu_cores <= 0: no budget.
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::condition_variable trim_;
  std::vector<std::thread> threads_;
  std::thread trimmer_;
};

}  // namespace topofit::server
