#pragma once
// Core v1 Events on Kubernetes objects, as `kubectl describe` shows them.
//
// CreateEvent POSTs one Event (count 1, first and last timestamp now) into the object's namespace, or
// "default" for cluster-scoped objects such as Nodes, and returns the API server's message on failure.
// EventRecorder does the same on a background WriteQueue (write_queue.h), so a caller on a hot path
// never waits for the API server: Record() queues and returns. Events are best effort by design
// (kube-scheduler's own are too): a lost one loses no state. Thread-safe.

#include <cstddef>
#include <string>

#include "base/status.h"
#include "extender/apiclient/api_client.h"
#include "extender/apiclient/write_queue.h"

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
// CreateEvent on `writes`: queued, made later on its thread; `api` must outlive the queue's writes.
void QueueEvent(WriteQueue& writes, ApiClient& api, EventSpec event);

class EventRecorder {
 public:
  // `api` must outlive the recorder. At most `max_queued` events wait; more are dropped.
  explicit EventRecorder(ApiClient& api, size_t max_queued = 1000) : api_(api), writes_(max_queued) {}

  void Record(EventSpec event);
  size_t dropped() const { return writes_.dropped(); }

 private:
  ApiClient& api_;
  WriteQueue writes_;  // Its destructor sends what is queued, then stops.
};

}  // namespace topofit::apiclient
