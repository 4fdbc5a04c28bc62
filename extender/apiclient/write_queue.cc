#include "extender/apiclient/write_queue.h"

#include "base/log.h"

namespace topofit::apiclient {

WriteQueue::WriteQueue(size_t max_queued) : max_queued_(max_queued), thread_([this] { Run(); }) {}

WriteQueue::~WriteQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WriteQueue::Push(std::string what, std::function<Status()> write) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= max_queued_) {
      if (dropped_++ % 100 == 0) {
        Log(LogLevel::kWarn, "API write dropped: queue full", {{"write", what}, {"dropped", std::to_string(dropped_)}});
      }
      return;
    }
    queue_.push_back(Write{std::move(what), std::move(write)});
  }
  cv_.notify_one();
}

size_t WriteQueue::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

void WriteQueue::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // Stopping with nothing left.
    Write w = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    if (Status s = w.write(); !s.ok()) Log(LogLevel::kWarn, "API write failed", {{"write", w.what}, {"error", s.error()}});
    lock.lock();
  }
}

}  // namespace topofit::apiclient
