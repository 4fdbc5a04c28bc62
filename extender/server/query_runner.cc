#include "extender/server/query_runner.h"

#include <malloc.h>
#include <time.h>

#include <algorithm>

#include "base/work_deadline.h"
#include "extender/server/thread_role.h"

namespace topofit::server {

namespace {

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

}  // namespace

QueryRunner::QueryRunner(int threads, double cpu_cores) : budget_(cpu_cores) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Work(); });
}

QueryRunner::~QueryRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
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
      const double cpu = ThreadCpuSeconds();
      {
        WorkDeadline installed(at, cancelled);
        r = query();
      }
      budget_.Charge(ThreadCpuSeconds() - cpu);
      // What the query freed goes back to the system, not into the arena for the next one (an alias
      // bomb's conversion or an explain over every node leaves tens of MB there otherwise).
      malloc_trim(0);
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
