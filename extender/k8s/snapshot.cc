#include "extender/k8s/snapshot.h"

#include <fmt/format.h>


#include "base/files.h"
#include "extender/k8s/json_read.h"
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

void DecodeItem(dom::element v, std::string_view kind, Snapshot& out) {
  if (kind == "Node") out.nodes.push_back(DecodeNodeValue(v, Path{}));
  else if (kind == "Pod") out.pods.push_back(DecodePodValue(v, Path{}));
}

Result<Snapshot> LoadJson(std::string_view text) {
  simdjson::padded_string padded(text);
  dom::parser parser;
  return CatchDecode<Snapshot>([&]() -> Result<Snapshot> {
    Snapshot out;
    dom::element root = json::Parse(parser, padded);
    if (root.type() != dom::element_type::OBJECT) json::Fail(Path{}, "expected a Kubernetes List object");
    std::string kind = KindOf(root);
    if (kind == "Node" || kind == "Pod") {
      DecodeItem(root, kind, out);
      return out;
    }
    dom::element items;
    if (dom::object(root)["items"].get(items) != simdjson::SUCCESS) {
      json::Fail(Path{}, kind.empty() ? "expected a List with items, a Node or a Pod"
                                      : fmt::format("unsupported kind '{}'", kind));
    }
    // kubectl's List items carry their own kind; a NodeList's or PodList's may not.
    std::string implied = kind == "NodeList" ? "Node" : kind == "PodList" ? "Pod" : "";
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

}  // namespace

Result<Snapshot> LoadSnapshot(std::string_view text) {
  if (LooksLikeJson(text)) return LoadJson(text);
  auto converted = YamlToJson(text);
  if (!converted) return Error{converted.error()};
  return LoadJson(*converted);
}

Result<Snapshot> LoadSnapshotFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return Error{text.error()};
  auto snap = LoadSnapshot(*text);
  if (!snap) return Error{fmt::format("{}: {}", path, snap.error())};
  return snap;
}

}  // namespace topofit::k8s
