#pragma once
// Core v1 Events on Kubernetes objects, as `kubectl describe` shows them.
//
// CreateEvent POSTs one Event (count 1, first and last timestamp now) into the object's namespace, or
// "default" for cluster-scoped objects such as Nodes, and returns the API server's message on failure.
// EventRecorder does the same on a background thread, so a caller on a hot path (bind) never waits for
// the API server: Record() queues and returns; a full queue drops the event with one log line. Events
// are best effort by design (kube-scheduler's own are too): a lost one loses no state. Thread-safe.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "extender/apiclient/api_client.h"

namespace topofit::apiclient {

struct EventSpec {
  std::string kind;        // "Pod", "Node"
  std::string name;
  std::string namespace_;  // "" for cluster-scoped objects.
  std::string uid;         // The object's uid; may be empty.
  std::string type = "Normal";  // "Normal" or "Warning"
  std::string reason;      // CamelCase, e.g. "GPUsAssigned"
  std::string message;
  std::string component;   // source.component and reportingComponent, e.g. "topofit"
  std::string host;        // source.host and reportingInstance; may be empty.
};

Status CreateEvent(ApiClient& api, const EventSpec& event);

class EventRecorder {
 public:
  // `api` must outlive the recorder. At most `max_queued` events wait; more are dropped.
  explicit EventRecorder(ApiClient& api, size_t max_queued = 1000);
  ~EventRecorder();  // Sends what is queued, then stops.

  void Record(EventSpec event);
  size_t dropped() const;

 private:
  void Run();
  ApiClient& api_;
  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<EventSpec> queue_;
  size_t dropped_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace topofit::apiclient
