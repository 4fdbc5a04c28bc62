#include "extender/apiclient/events.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "base/log.h"

namespace topofit::apiclient {

Status CreateEvent(ApiClient& api, const EventSpec& event) {
  const auto now = std::chrono::system_clock::now();
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const std::string stamp = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(now));
  const std::string ns = event.namespace_.empty() ? "default" : event.namespace_;
  nlohmann::json involved = {{"apiVersion", "v1"}, {"kind", event.kind}, {"name", event.name}};
  if (!event.namespace_.empty()) involved["namespace"] = event.namespace_;
  if (!event.uid.empty()) involved["uid"] = event.uid;
  nlohmann::json source = {{"component", event.component}};
  if (!event.host.empty()) source["host"] = event.host;
  nlohmann::json ev = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      // kube's own recorders name events <object>.<nanoseconds in hex>.
      {"metadata", {{"name", fmt::format("{}.{:x}", event.name, nanos)}, {"namespace", ns}}},
      {"involvedObject", involved},
      {"reason", event.reason},
      {"message", event.message},
      {"type", event.type},
      {"source", source},
      {"reportingComponent", event.component},
      {"reportingInstance", event.host.empty() ? event.component : event.host},
      {"firstTimestamp", stamp},
      {"lastTimestamp", stamp},
      {"count", 1},
  };
  const std::string what = fmt::format("create event {} on {} {}{}{}", event.reason, event.kind,
                                       event.namespace_, event.namespace_.empty() ? "" : "/", event.name);
  auto res = api.Do("POST", "/api/v1/namespaces/" + UrlEncode(ns) + "/events", ev.dump(), "application/json");
  if (!res.ok()) return Error{what + ": " + res.error()};
  if (res->status / 100 != 2) return Error{what + ": " + ApiErrorMessage(*res)};
  return Status::Ok();
}

EventRecorder::EventRecorder(ApiClient& api, size_t max_queued)
    : api_(api), max_queued_(max_queued), thread_([this] { Run(); }) {}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EventRecorder::Record(EventSpec event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= max_queued_) {
      if (dropped_++ % 100 == 0) {
        Log(LogLevel::kWarn, "event dropped: queue full",
            {{"reason", event.reason}, {"object", event.name}, {"dropped", std::to_string(dropped_)}});
      }
      return;
    }
    queue_.push_back(std::move(event));
  }
  cv_.notify_one();
}

size_t EventRecorder::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

void EventRecorder::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // Stopping with nothing left.
    EventSpec event = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    if (Status s = CreateEvent(api_, event); !s.ok()) {
      Log(LogLevel::kWarn, "cannot record an event", {{"reason", event.reason}, {"error", s.error()}});
    }
    lock.lock();
  }
}

}  // namespace topofit::apiclient
