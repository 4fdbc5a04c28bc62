#include "extender/apiclient/reflector.h"

#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "base/log.h"
#include "extender/apiclient/backoff.h"
#include "extender/apiclient/watch_event.h"
#include "extender/k8s/list_stream.h"

namespace topofit::apiclient {

Reflector::Reflector(ApiClient& api, ReflectorStore& store, ReflectorOptions options,
                     std::function<void()> on_synced)
    : api_(api), store_(store), options_(std::move(options)), on_synced_(std::move(on_synced)) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start(const Reflector* gate) {
  thread_ = std::thread([this, gate] { Run(gate); });
}

void Reflector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  handle_.Abort();
  if (thread_.joinable()) thread_.join();
}

bool Reflector::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_; });
}

void Reflector::Log(const std::string& msg) const {
  if (options_.log) {
    options_.log(msg);
  } else {
    topofit::Log(LogLevel::kWarn, "cluster watch", {{"kind", options_.kind}, {"detail", msg}});
  }
}

void Reflector::SetConnected(bool connected) {
  if (connected_.exchange(connected, std::memory_order_acq_rel) != connected && options_.on_connection)
    options_.on_connection(connected);
}

void Reflector::Run(const Reflector* gate) {
  while (gate && !gate->synced()) {
    if (!Sleep(std::chrono::milliseconds(20))) return;
  }
  Backoff backoff(options_.timings.backoff_initial, options_.timings.backoff_max);
  std::string rv;
  while (!handle_.aborted()) {
    if (rv.empty()) {
      auto listed = List();
      if (!listed.ok()) {
        if (handle_.aborted()) return;
        if (HandleAbsent()) {
          if (!Sleep(options_.absent_retry)) return;
          continue;
        }
        SetConnected(false);
        Log("list failed: " + listed.error());
        if (!Sleep(backoff.Next())) return;
        continue;
      }
      if (absent_.exchange(false, std::memory_order_acq_rel)) Log("served now; watching");
      rv = std::move(*listed);
      backoff.Reset();
    }
    bool got_event = false;
    switch (Watch(rv, &got_event)) {
      case WatchEnd::Clean:
        SetConnected(true);  // Ended by the server's timeout: it was there all along.
        backoff.Reset();
        break;
      case WatchEnd::Gone:
        rv.clear();  // Too old to resume: list again (at once; a failing list backs off itself).
        break;
      case WatchEnd::Failed:
        if (handle_.aborted()) return;
        SetConnected(false);
        if (got_event) backoff.Reset();  // It worked for a while: retry soon.
        if (!Sleep(backoff.Next())) return;
        break;
    }
  }
}

bool Reflector::HandleAbsent() {
  if (options_.absent_retry.count() <= 0 || list_status_ != 404) return false;
  SetConnected(true);  // The API server answers; it does not serve this kind.
  if (!absent_.exchange(true, std::memory_order_acq_rel)) {
    Log(fmt::format("{} is not served (404: its CRD is not installed or its API version is not enabled); none "
                    "are known, checking again every {} s", options_.path, options_.absent_retry.count() / 1000));
    store_.BeginList();
    store_.EndList();
  }
  return true;
}

Result<std::string> Reflector::List() {
  list_status_ = 0;
  store_.BeginList();
  std::string cont, rv;
  bool paged = options_.timings.page_size > 0;
  for (;;) {
    std::string path = options_.path + "?";
    if (paged) path += "limit=" + std::to_string(options_.timings.page_size) + "&";
    if (!options_.field_selector.empty()) path += "fieldSelector=" + UrlEncode(options_.field_selector) + "&";
    if (!cont.empty()) path += "continue=" + UrlEncode(cont) + "&";
    path.pop_back();
    k8s::ListStream page([this](int, std::string_view item) {
      store_.ListItem(item);
      return Status::Ok();
    });
    Status parsed;
    auto res = api_.Stream(
        path,
        [&](const char* d, size_t n) {
          parsed = page.Feed(std::string_view(d, n));
          return parsed.ok();
        },
        options_.timings.list_timeout, &handle_);
    if (!parsed.ok()) return Error{"list: " + parsed.error()};
    if (!res.ok()) return Error{res.error()};
    list_status_ = res->status;
    if (res->status == 410 && !cont.empty()) {
      // The continue token expired between pages: start over with one unpaged list, as client-go's
      // pager does (FullListIfExpired).
      Log("list continue token expired; listing without paging");
      store_.BeginList();
      cont.clear();
      paged = false;
      continue;
    }
    if (res->status != 200) return Error{ApiErrorMessage(*res)};
    if (Status s = page.Finish(); !s.ok()) return Error{"list: " + s.error()};
    rv.clear();
    cont.clear();
    for (const k8s::ListStream::Field& f : page.fields()) {
      if (f.key != "metadata") continue;
      auto meta = nlohmann::json::parse(f.json, nullptr, /*allow_exceptions=*/false);
      if (!meta.is_object()) continue;
      auto text = [&](const char* key) {
        auto it = meta.find(key);
        return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      rv = text("resourceVersion");
      cont = text("continue");
    }
    if (cont.empty()) break;
  }
  if (rv.empty()) return Error{"list: no metadata.resourceVersion"};
  store_.EndList();
  lists_.fetch_add(1);
  synced_.store(true, std::memory_order_release);
  SetConnected(true);
  if (on_synced_) on_synced_();
  return rv;
}

Reflector::WatchEnd Reflector::Watch(std::string& rv, bool* got_event) {
  static thread_local std::mt19937 rng(std::random_device{}());
  int64_t min_s = options_.timings.watch_timeout_min.count();
  int64_t timeout_s = std::uniform_int_distribution<int64_t>(min_s, 2 * min_s)(rng);
  const std::string path = WatchPath(rv, timeout_s);
  LineSplitter lines;
  WatchEnd end = WatchEnd::Clean;
  std::string failure;
  auto on_line = [&](std::string_view line) { return ApplyWatchLine(line, rv, got_event, end, failure); };
  auto read_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::seconds(timeout_s)) +
                      options_.timings.read_slack;
  auto res = api_.Stream(
      path, [&](const char* d, size_t n) { return lines.Feed(std::string_view(d, n), on_line); },
      read_timeout, &handle_);
  if (end != WatchEnd::Clean) {  // Our own callback stopped the stream.
    if (end == WatchEnd::Gone) Log(failure + "; listing again");
    else Log(failure);
    return end;
  }
  return EndOfStream(res);
}

std::string Reflector::WatchPath(const std::string& rv, int64_t timeout_s) const {
  std::string path = options_.path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + UrlEncode(rv) +
                     "&timeoutSeconds=" + std::to_string(timeout_s);
  if (!options_.field_selector.empty()) path += "&fieldSelector=" + UrlEncode(options_.field_selector);
  return path;
}

bool Reflector::ApplyWatchLine(std::string_view line, std::string& rv, bool* got_event, WatchEnd& end,
                               std::string& failure) {
  if (!*got_event) SetConnected(true);  // The server answers on this watch.
  auto ev = ParseWatchEvent(line);
  if (!ev.ok()) {
    failure = ev.error();
    end = WatchEnd::Failed;
    return false;
  }
  switch (ev->type) {
    case WatchEvent::Type::Added:
    case WatchEvent::Type::Modified:
      store_.Upsert(ev->object);
      break;
    case WatchEvent::Type::Deleted:
      store_.Remove(ev->object);
      break;
    case WatchEvent::Type::Bookmark:
      break;
    case WatchEvent::Type::Error:
      failure = "ERROR event " + std::to_string(ev->code) + ": " + ev->message;
      end = ev->code == 410 ? WatchEnd::Gone : WatchEnd::Failed;
      return false;
  }
  if (!ev->resource_version.empty()) rv = ev->resource_version;
  *got_event = true;
  events_.fetch_add(1);
  return true;
}

Reflector::WatchEnd Reflector::EndOfStream(const Result<ApiResponse>& res) {
  if (!res.ok()) {
    if (!handle_.aborted()) Log("watch broken: " + res.error());
    return WatchEnd::Failed;
  }
  if (res->status == 410) {
    Log("watch: 410 Gone; listing again");
    return WatchEnd::Gone;
  }
  if (res->status == 404 && options_.absent_retry.count() > 0) return WatchEnd::Gone;  // The list says why.
  if (res->status != 200) {
    Log("watch: " + ApiErrorMessage(*res));
    return WatchEnd::Failed;
  }
  return WatchEnd::Clean;
}

}  // namespace topofit::apiclient
