#pragma once
// Reflector: keeps a ReflectorStore equal to one kind of API object (all Nodes, all live Pods) by
// listing and then watching, in its own thread.
//
// Loop: list (paged as client-go's pager does: `limit` 500, following `continue`; a 410 Expired on a
// later page, the token having expired, lists again at once without paging), handing the store each
// item as its page's bytes arrive (k8s/list_stream.h: memory for a piece of one page, not the list),
// then watch from the list's resourceVersion with allowWatchBookmarks; each event goes to
// Upsert/Remove and advances the resourceVersion (bookmarks too). A watch that ends cleanly (server
// timeoutSeconds) is re-opened from the last resourceVersion at once; 410 Gone (HTTP or an ERROR
// event) forces a new list; other failures (dropped connection, 5xx, 401 - the token file is re-read)
// wait an exponential backoff with jitter and re-watch. Every request is bounded by timeouts and
// Stop() aborts the one in flight, so Stop() returns promptly.
//
// The store is called only from the reflector's thread. synced() turns true after the first
// completed list (EndList) and stays true (a later re-list updates objects as its pages arrive and
// deletes what it lacks once complete).
// connected() says whether the API server is answering: true after a completed list and from the
// first line (event or bookmark) of each watch, false after a failed list or a broken watch until
// one of those again. A healthy watch that is quiet keeps it; kube-apiserver sends a bookmark at
// least every minute, so a reconnected watch reads true again within about a minute.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "extender/apiclient/api_client.h"

namespace topofit::apiclient {

// A list is BeginList, ListItem for each object of every page (its JSON as the server sent it), then
// EndList once the last page is in: what that list did not have is gone. A list that fails part way
// begins again with BeginList; the objects it had delivered stay (they were current when listed).
class ReflectorStore {
 public:
  virtual ~ReflectorStore() = default;
  virtual void BeginList() = 0;
  virtual void ListItem(std::string_view json) = 0;
  virtual void EndList() = 0;
  virtual void Upsert(const nlohmann::json& object) = 0;
  virtual void Remove(const nlohmann::json& object) = 0;
};

// How a reflector pages its lists, backs off and times its requests (tests shorten them).
struct WatchTimings {
  int page_size = 500;  // Objects per list page; 0: one unpaged list.
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{10000};
  // Server-side watch timeoutSeconds is drawn from [min, 2*min] so that watches do not all end together.
  std::chrono::seconds watch_timeout_min{300};
  // Added to the watch timeout to give the read timeout: silence that long means a dead connection.
  std::chrono::milliseconds read_slack{30000};
  std::chrono::milliseconds list_timeout{60000};  // Read timeout while listing.
};

struct ReflectorOptions {
  std::string kind;             // "nodes", "pods": for messages.
  std::string path;             // "/api/v1/nodes"
  std::string field_selector;   // "" for none.
  WatchTimings timings;
  std::function<void(const std::string&)> log;    // nullptr: stderr.
  // Called from the reflector's thread each time connected() changes (e.g. for a metric).
  std::function<void(bool connected)> on_connection;
  // > 0: the kind may not be served (a CRD not installed, an API version not enabled). A list answered
  // 404 is then logged once (and once when it is served again), empties the store (BeginList, EndList),
  // counts as connected and is tried again every `absent_retry`, not at the backoff's pace; a watch
  // answered 404 lists again. 0: a 404 is a failure like any other.
  std::chrono::milliseconds absent_retry{0};
};

class Reflector {
 public:
  // on_synced, if set, is called from the reflector's thread after every completed list.
  Reflector(ApiClient& api, ReflectorStore& store, ReflectorOptions options,
            std::function<void()> on_synced = nullptr);
  ~Reflector();  // Stops.
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Starts the thread. If `gate` is set the first list waits until gate->synced() (pods after
  // nodes, so that holdings find their node).
  void Start(const Reflector* gate = nullptr);
  void Stop();

  bool synced() const { return synced_.load(std::memory_order_acquire); }
  // The last list was answered 404 and absent_retry is set: the API server does not serve the kind.
  bool absent() const { return absent_.load(std::memory_order_acquire); }
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  // Counters, for tests and metrics.
  uint64_t lists() const { return lists_.load(); }
  uint64_t events() const { return events_.load(); }

 private:
  enum class WatchEnd { Clean, Gone, Failed };
  void Run(const Reflector* gate);
  Result<std::string> List();
  // One watch from rv, which each event advances; got_event: some event came.
  WatchEnd Watch(std::string& rv, bool* got_event);
  std::string WatchPath(const std::string& rv, int64_t timeout_s) const;
  // One line of a watch: the event applied to the store, rv advanced; false, with `end` and
  // `failure` set, to stop the stream at a line that does not parse or an ERROR event.
  bool ApplyWatchLine(std::string_view line, std::string& rv, bool* got_event, WatchEnd& end, std::string& failure);
  // How a watch the server ended went (Clean: its timeout), logged unless Clean.
  WatchEnd EndOfStream(const Result<ApiResponse>& res);
  bool Sleep(std::chrono::milliseconds d);  // false when stopping.
  void Log(const std::string& msg) const;
  void SetConnected(bool connected);
  // After a failed list: true when it was a 404 of a kind that may be absent (then handled: logged once,
  // the store emptied); the caller waits absent_retry.
  bool HandleAbsent();

  ApiClient& api_;
  ReflectorStore& store_;
  const ReflectorOptions options_;
  const std::function<void()> on_synced_;
  std::thread thread_;
  StreamHandle handle_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<bool> synced_{false};
  std::atomic<bool> connected_{false};
  std::atomic<bool> absent_{false};
  int list_status_ = 0;  // HTTP status of the last list's last page; 0 when it got none.
  std::atomic<uint64_t> lists_{0}, events_{0};
};

}  // namespace topofit::apiclient
