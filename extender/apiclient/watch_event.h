#pragma once
// Watch stream decoding: a watch response is a chunked body of JSON objects, one per line,
// {"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": {...}}. Chunk boundaries
// fall anywhere, so LineSplitter reassembles lines; ParseWatchEvent decodes one.
//
// An ERROR event's object is a Status; code 410 (Gone) means the resourceVersion is too old and the
// watcher must list again. A BOOKMARK carries only metadata.resourceVersion.

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace topofit::apiclient {

// Accumulates stream bytes and yields complete lines (without '\n'; blank lines are skipped).
// Not thread-safe; one per stream.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line = size_t(64) << 20) : max_line_(max_line) {}
  // Calls on_line for each complete line; stops and returns false when on_line does, or when a
  // line exceeds max_line (a corrupt stream).
  bool Feed(std::string_view data, const std::function<bool(std::string_view line)>& on_line);
  size_t pending() const { return partial_.size(); }

 private:
  size_t max_line_;
  std::string partial_;
};

struct WatchEvent {
  enum class Type { Added, Modified, Deleted, Bookmark, Error };
  Type type = Type::Added;
  nlohmann::json object;         // The object (for Error: the Status).
  std::string resource_version;  // object.metadata.resourceVersion, "" if absent.
  int code = 0;                  // Error: Status.code (410 = Gone).
  std::string message;           // Error: Status.message.
};

Result<WatchEvent> ParseWatchEvent(std::string_view line);

}  // namespace topofit::apiclient
