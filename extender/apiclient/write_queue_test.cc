#include "extender/apiclient/write_queue.h"

#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <vector>

namespace topofit::apiclient {
namespace {

TEST_CASE("write queue: writes are made in order, a failed one does not stop the rest, the destructor drains") {
  std::vector<int> made;  // Written by the queue's thread only; read after it has stopped.
  {
    WriteQueue q;
    for (int i = 0; i < 50; ++i) {
      q.Push("write " + std::to_string(i), [&made, i]() -> Status {
        made.push_back(i);
        if (i % 7 == 0) return Error{"refused"};
        return Status::Ok();
      });
    }
  }
  REQUIRE(made.size() == 50);
  for (int i = 0; i < 50; ++i) CHECK(made[i] == i);
}

TEST_CASE("write queue: a full queue drops what does not fit and counts it") {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> made{0};
  std::promise<void> started;
  {
    WriteQueue q(/*max_queued=*/2);
    q.Push("blocker", [&]() -> Status {  // Taken off the queue at once; holds the thread.
      started.set_value();
      released.wait();
      ++made;
      return Status::Ok();
    });
    started.get_future().wait();
    for (int i = 0; i < 5; ++i) q.Push("w", [&]() -> Status { ++made; return Status::Ok(); });
    CHECK(q.dropped() == 3);
    release.set_value();
  }
  CHECK(made.load() == 3);
}

}  // namespace
}  // namespace topofit::apiclient
