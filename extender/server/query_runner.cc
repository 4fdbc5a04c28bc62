#include "extender/server/query_runner.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>

#include "base/work_deadline.h"
#include "extender/server/thread_role.h"

namespace topofit::server {

QueryRunner::QueryRunner(int threads, double cpu_cores) : budget_(cpu_cores), unlimited_(cpu_cores <= 0) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Work(); });
  trimmer_ = std::thread([this] { Trim(); });
}

// What was freed goes back to the system, not into malloc's arenas for the next request (an alias
// bomb's conversion or an explain over every node leaves tens of MB there, and so do the buffers of
// a flood of hostile connections). malloc_trim holds each arena's lock while it returns pages, and
// the verbs' workers share arenas with the query threads: it runs here, on a thread at the caller's
// priority (not nice 19, where it could be preempted for long with a lock the verbs wait on), once
// per kTrimInterval.
void QueryRunner::Trim() {
  SetThreadRole("query-trim", 0);
  std::unique_lock<std::mutex> lock(mu_);
  while (!trim_.wait_for(lock, kTrimInterval, [this] { return stopping_; })) {
    lock.unlock();
    malloc_trim(0);
    lock.lock();
  }
}

QueryRunner::~QueryRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  trim_.notify_all();
  for (std::thread& t : threads_) t.join();
  trimmer_.join();
}

Reply QueryRunner::Run(const std::function<Reply()>& query) {
  const WorkDeadline* deadline = WorkDeadline::Current();
  const auto at = deadline ? deadline->at() : WorkDeadline::Clock::time_point::max();
  const std::atomic<bool>* cancelled = deadline ? deadline->cancelled() : nullptr;
  Reply reply;
  bool done = false;
  std::condition_variable finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back([&] {
      Reply r;
      const double cpu = ThisThreadCpuSeconds();
      {
        WorkDeadline installed(at, cancelled);
        r = query();
      }
      budget_.Charge(ThisThreadCpuSeconds() - cpu);
      std::lock_guard<std::mutex> done_lock(mu_);
      reply = std::move(r);
      done = true;
      finished.notify_one();
    });
  }
  wake_.notify_one();
  std::unique_lock<std::mutex> lock(mu_);
  finished.wait(lock, [&] { return done; });
  return reply;
}

void QueryRunner::Work() {
  SetThreadRole("query", kQueryNice);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace topofit::server
