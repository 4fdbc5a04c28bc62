#pragma once
// WriteQueue: API writes that nobody waits for (Events, the touch that requeues a pod), made one at a
// time on a background thread, so a caller on a hot path (bind, the watch) never waits for the API
// server. Push queues and returns; a full queue drops the write with one log line per 100 dropped; a
// failed write is logged (with its `what`), never retried: these writes are best effort by design,
// and a lost one loses no state. The destructor makes what is queued, then stops. Thread-safe.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace topofit::apiclient {

class WriteQueue {
 public:
  explicit WriteQueue(size_t max_queued = 1000);
  ~WriteQueue();

  // `what` names the write in log lines, e.g. "event GPUsAssigned on pod ns/p".
  void Push(std::string what, std::function<Status()> write);
  size_t dropped() const;

 private:
  struct Write {
    std::string what;
    std::function<Status()> write;
  };
  void Run();
  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Write> queue_;
  size_t dropped_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // Declared last: starts after the rest is built.
};

}  // namespace topofit::apiclient
