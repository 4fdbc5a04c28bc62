#include "extender/server/query_runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "base/work_deadline.h"

namespace topofit::server {

QueryRunner::QueryRunner(int threads) {
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
      {
        WorkDeadline installed(at, cancelled);
        r = query();
      }
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
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kQueryNice);  // Linux: nice is per thread.
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
