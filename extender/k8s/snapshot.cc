#include "extender/k8s/snapshot.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/json_writer.h"
#include "extender/k8s/dra_decoder.h"
#include "extender/k8s/json_read.h"
#include "extender/k8s/list_stream.h"
#include "extender/k8s/object_decoder.h"
#include "extender/k8s/yaml_to_json.h"

namespace topofit::k8s {
namespace {

namespace dom = json::dom;
using json::KeyIs;
using json::Path;

std::string KindOf(dom::element item) {
  std::string kind;
  if (item.type() != dom::element_type::OBJECT) return kind;
  for (dom::key_value_pair field : dom::object(item)) {
    if (KeyIs(field.key, "kind")) kind = json::String(field.value, Path{nullptr, "kind"});
  }
  return kind;
}

// A PodGroup's apiVersion names its API; without one it is the Workload API's.
PodGroupObject DecodeSnapshotPodGroup(dom::element v, const Path& path) {
  return DecodePodGroupValue(v, path, PodGroupObject::Api::kWorkload);
}

// The one place that knows the kinds a snapshot holds: `v` of `kind` to the sink's function for it.
void DeliverItem(dom::element v, std::string_view kind, const Path& path, const SnapshotSink& sink) {
  if (kind == "Node") sink.node(DecodeNodeValue(v, path));
  else if (kind == "Pod") sink.pod(DecodePodValue(v, path));
  else if (kind == "DeviceClass" && sink.device_class) sink.device_class(DecodeDeviceClassValue(v, path));
  else if (kind == "ResourceSlice" && sink.resource_slice) sink.resource_slice(DecodeResourceSliceValue(v, path));
  else if (kind == "ResourceClaim" && sink.resource_claim) sink.resource_claim(DecodeResourceClaimValue(v, path));
  else if (kind == "PodGroup" && sink.pod_group) sink.pod_group(DecodeSnapshotPodGroup(v, path));
}

bool IsObjectKind(std::string_view kind) {
  return kind == "Node" || kind == "Pod" || kind == "PodGroup" || kind == "DeviceClass" ||
         kind == "ResourceSlice" || kind == "ResourceClaim";
}

// The item kind a typed List implies for items that do not name theirs ("" for a plain List).
std::string_view Implied(std::string_view list_kind) {
  if (list_kind.size() <= 4 || list_kind.substr(list_kind.size() - 4) != "List") return "";
  std::string_view item = list_kind.substr(0, list_kind.size() - 4);
  return IsObjectKind(item) ? item : "";
}

SnapshotSink CollectInto(Snapshot& out) {
  return SnapshotSink{[&](NodeObject&& n) { out.nodes.push_back(std::move(n)); },
                      [&](PodObject&& p) { out.pods.push_back(std::move(p)); },
                      [&](DeviceClassObject&& c) { out.device_classes.push_back(std::move(c)); },
                      [&](ResourceSliceObject&& s) { out.resource_slices.push_back(std::move(s)); },
                      [&](ResourceClaimObject&& c) { out.resource_claims.push_back(std::move(c)); },
                      [&](PodGroupObject&& g) { out.pod_groups.push_back(std::move(g)); }};
}

void DecodeItem(dom::element v, std::string_view kind, Snapshot& out) { DeliverItem(v, kind, Path{}, CollectInto(out)); }

Result<Snapshot> LoadJson(std::string_view text) {
  simdjson::padded_string padded(text);
  dom::parser parser;
  return CatchDecode<Snapshot>([&]() -> Result<Snapshot> {
    Snapshot out;
    dom::element root = json::Parse(parser, padded);
    if (root.type() != dom::element_type::OBJECT) json::Fail(Path{}, "expected a Kubernetes List object");
    std::string kind = KindOf(root);
    if (IsObjectKind(kind)) {
      DecodeItem(root, kind, out);
      return out;
    }
    dom::element items;
    if (dom::object(root)["items"].get(items) != simdjson::SUCCESS) {
      json::Fail(Path{}, kind.empty() ? "expected a List with items, a Node or a Pod"
                                      : fmt::format("unsupported kind '{}'", kind));
    }
    // kubectl's List items carry their own kind; a NodeList's or PodList's may not.
    std::string implied(Implied(kind));
    Path items_path{nullptr, "items"};
    json::ForEachElement(items, items_path, [&](int i, dom::element item) {
      if (item.type() != dom::element_type::OBJECT) json::Fail(items_path.Index(i), "expected an object");
      std::string item_kind = KindOf(item);
      if (item_kind.empty()) item_kind = implied;
      try {
        DecodeItem(item, item_kind, out);
      } catch (json::DecodeError& e) {
        e.message = fmt::format("items[{}] {}", i, e.message);
        throw;
      }
    });
    return out;
  });
}

// The List of a text arriving in pieces, decoded item by item (the streaming loaders).
class Streamer {
 public:
  explicit Streamer(const SnapshotSink& sink)
      : sink_(sink), list_([this](int i, std::string_view text) { return Item(i, text); }) {}
  Status Feed(std::string_view piece) { return list_.Feed(piece); }
  Status Finish();

 private:
  Status Item(int i, std::string_view text);
  Status Decode(int i, std::string_view text, std::string_view implied, bool defer_kindless);
  // The root's kind from the fields read so far ("" when none; the last "kind" wins, as in KindOf).
  Result<std::string> RootKind();
  void Deliver(dom::element v, std::string_view kind, const Path& path);

  const SnapshotSink& sink_;
  ListStream list_;
  dom::parser parser_;
  std::vector<std::pair<int, std::string>> deferred_;  // Kind-less items read before the root's kind.
  size_t fields_read_ = 0;  // Root fields seen when root_kind_ was last read.
  std::string root_kind_;
  bool has_kind_ = false;
};

void Streamer::Deliver(dom::element v, std::string_view kind, const Path& path) { DeliverItem(v, kind, path, sink_); }

Result<std::string> Streamer::RootKind() {
  return CatchDecode<std::string>([&] {
    std::string kind;
    for (const ListStream::Field& f : list_.fields()) {
      if (!KeyIs(f.key, "kind")) continue;
      simdjson::padded_string padded(f.json);
      kind = json::String(json::Parse(parser_, padded), Path{nullptr, "kind"});
    }
    return kind;
  });
}

Status Streamer::Decode(int i, std::string_view text, std::string_view implied, bool defer_kindless) {
  Result<bool> done = CatchDecode<bool>([&] {
    simdjson::padded_string padded(text);
    dom::element item = json::Parse(parser_, padded);
    Path items_path{nullptr, "items"};
    if (item.type() != dom::element_type::OBJECT) json::Fail(items_path.Index(i), "expected an object");
    std::string kind = KindOf(item);
    if (defer_kindless && (kind.empty() || !deferred_.empty())) {  // Behind a waiting item: keeps the order.
      deferred_.emplace_back(i, std::string(text));
      return true;
    }
    if (kind.empty()) kind = implied;
    try {
      Deliver(item, kind, Path{});
    } catch (json::DecodeError& e) {
      e.message = fmt::format("items[{}] {}", i, e.message);
      throw;
    }
    return true;
  });
  if (!done) return Error{done.error()};
  return Status::Ok();
}

Status Streamer::Item(int i, std::string_view text) {
  if (list_.fields().size() != fields_read_) {  // The kind, if any, comes among the fields.
    fields_read_ = list_.fields().size();
    auto kind = RootKind();
    if (!kind) return Error{kind.error()};
    root_kind_ = std::move(*kind);
    for (const ListStream::Field& f : list_.fields()) has_kind_ |= KeyIs(f.key, "kind");
  }
  if (IsObjectKind(root_kind_)) return Status::Ok();  // One object: items is a field.
  // Without the List's kind yet, an item that does not name its own kind waits for it.
  return Decode(i, text, Implied(root_kind_), /*defer_kindless=*/!has_kind_);
}

Status Streamer::Finish() {
  if (Status s = list_.Finish(); !s.ok()) return s;
  // Every field must be valid JSON, as the whole-document parse requires.
  Result<bool> valid = CatchDecode<bool>([&] {
    for (const ListStream::Field& f : list_.fields()) {
      simdjson::padded_string padded(f.json);
      json::Parse(parser_, padded);
    }
    return true;
  });
  if (!valid) return Error{valid.error()};
  auto kind = RootKind();
  if (!kind) return Error{kind.error()};
  if (IsObjectKind(*kind)) {
    // One object: put its fields back together and decode it whole.
    std::string text = "{";
    for (const ListStream::Field& f : list_.fields()) {
      if (text.size() > 1) text += ',';
      AppendJsonString(text, f.key);
      text += ':';
      text += f.json;
    }
    text += '}';
    Result<bool> done = CatchDecode<bool>([&] {
      simdjson::padded_string padded(text);
      Deliver(json::Parse(parser_, padded), *kind, Path{});
      return true;
    });
    if (!done) return Error{done.error()};
    return Status::Ok();
  }
  if (!list_.has_items()) {
    const ListStream::Field* items = nullptr;
    for (const ListStream::Field& f : list_.fields())
      if (f.key == "items" && !items) items = &f;
    Result<bool> checked = CatchDecode<bool>([&] {
      if (!items) {
        json::Fail(Path{}, kind->empty() ? "expected a List with items, a Node or a Pod"
                                         : fmt::format("unsupported kind '{}'", *kind));
      }
      simdjson::padded_string padded(items->json);
      if (!json::IsNull(json::Parse(parser_, padded))) json::Fail(Path{nullptr, "items"}, "expected an array");
      return true;
    });
    if (!checked) return Error{checked.error()};
  }
  for (auto& [i, text] : deferred_) {
    if (Status s = Decode(i, text, Implied(*kind), false); !s.ok()) return s;
    std::string().swap(text);
  }
  return Status::Ok();
}

}  // namespace

Status StreamSnapshot(std::string_view text, const SnapshotSink& sink) {
  std::string converted;
  if (!LooksLikeJson(text)) {
    auto json = YamlToJson(text);
    if (!json) return Error{json.error()};
    converted = std::move(*json);
    text = converted;
  }
  Streamer streamer(sink);
  if (Status s = streamer.Feed(text); !s.ok()) return s;
  return streamer.Finish();
}

Status StreamSnapshotFile(const std::string& path, const SnapshotSink& sink) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  std::string piece(1 << 20, '\0');
  auto read = [&]() -> Result<size_t> {
    size_t n = std::fread(piece.data(), 1, piece.size(), f);
    if (n == 0 && std::ferror(f)) return Error{"cannot read " + path + ": " + std::strerror(errno)};
    return n;
  };
  auto n = read();
  if (!n) return Error{n.error()};
  std::string_view first(piece.data(), *n);
  Status s;
  if (!LooksLikeJson(first)) {
    // YAML (or nothing): converted whole, as it cannot be split before it is JSON.
    std::string all(first);
    for (;;) {
      auto more = read();
      if (!more) return Error{more.error()};
      if (*more == 0) break;
      all.append(piece.data(), *more);
    }
    s = StreamSnapshot(all, sink);
  } else {
    Streamer streamer(sink);
    s = streamer.Feed(first);
    while (s.ok()) {
      auto more = read();
      if (!more) return Error{more.error()};
      if (*more == 0) break;
      s = streamer.Feed(std::string_view(piece.data(), *more));
    }
    if (s.ok()) s = streamer.Finish();
  }
  if (!s.ok()) return Error{fmt::format("{}: {}", path, s.error())};
  return Status::Ok();
}

Result<Snapshot> LoadSnapshot(std::string_view text) {
  if (LooksLikeJson(text)) return LoadJson(text);
  auto converted = YamlToJson(text);
  if (!converted) return Error{converted.error()};
  return LoadJson(*converted);
}

Result<Snapshot> LoadSnapshotFile(const std::string& path) {
  Snapshot out;
  SnapshotSink sink = CollectInto(out);
  if (Status s = StreamSnapshotFile(path, sink); !s.ok()) return Error{s.error()};
  return out;
}

}  // namespace topofit::k8s
