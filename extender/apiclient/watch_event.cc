#include "extender/apiclient/watch_event.h"

namespace topofit::apiclient {

bool LineSplitter::Feed(std::string_view data,
                        const std::function<bool(std::string_view line)>& on_line) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      if (partial_.size() + data.size() > max_line_) return false;
      partial_.append(data);
      return true;
    }
    std::string_view piece = data.substr(0, nl);
    data.remove_prefix(nl + 1);
    std::string_view line = piece;
    if (!partial_.empty()) {
      partial_.append(piece);
      line = partial_;
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    bool keep_going = line.empty() || on_line(line);
    partial_.clear();
    if (!keep_going) return false;
  }
  return true;
}

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error{"watch event: not a JSON object"};
  auto type = j.find("type");
  auto object = j.find("object");
  if (type == j.end() || !type->is_string() || object == j.end() || !object->is_object())
    return Error{"watch event: missing type or object"};
  WatchEvent ev;
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "ADDED") ev.type = WatchEvent::Type::Added;
  else if (t == "MODIFIED") ev.type = WatchEvent::Type::Modified;
  else if (t == "DELETED") ev.type = WatchEvent::Type::Deleted;
  else if (t == "BOOKMARK") ev.type = WatchEvent::Type::Bookmark;
  else if (t == "ERROR") ev.type = WatchEvent::Type::Error;
  else return Error{"watch event: unknown type '" + t + "'"};
  ev.object = std::move(*object);
  if (auto meta = ev.object.find("metadata"); meta != ev.object.end() && meta->is_object()) {
    if (auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string())
      ev.resource_version = rv->get<std::string>();
  }
  if (ev.type == WatchEvent::Type::Error) {
    if (auto code = ev.object.find("code"); code != ev.object.end() && code->is_number_integer())
      ev.code = code->get<int>();
    if (auto msg = ev.object.find("message"); msg != ev.object.end() && msg->is_string())
      ev.message = msg->get<std::string>();
  }
  return ev;
}

}  // namespace topofit::apiclient
