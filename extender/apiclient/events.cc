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

void QueueEvent(WriteQueue& writes, ApiClient& api, EventSpec event) {
  std::string what = "event " + event.reason + " on " + event.kind + " " + event.namespace_ +
                     (event.namespace_.empty() ? "" : "/") + event.name;
  writes.Push(std::move(what), [&api, event = std::move(event)] { return CreateEvent(api, event); });
}

void EventRecorder::Record(EventSpec event) { QueueEvent(writes_, api_, std::move(event)); }

}  // namespace topofit::apiclient
