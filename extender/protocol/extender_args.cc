// Hot path: a filter body with 5,000 node names is ~150 KB; one padded copy, one DOM parse with a
// reused per-thread parser (its buffers stay allocated), then a walk of the tape.
#include "extender/protocol/extender_args.h"

#include <cstring>

#include "extender/k8s/json_read.h"
#include "extender/k8s/object_decoder.h"
#include "extender/k8s/raw_json.h"

namespace topofit::protocol {
namespace {

namespace dom = k8s::json::dom;
using k8s::json::KeyIs;
using k8s::json::Path;
using k8s::CatchDecode;
using k8s::DecodeNodeValue;
using k8s::DecodePodValue;

dom::parser& ThreadParser() {
  thread_local dom::parser parser;
  return parser;
}

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING);

// Parses the body and calls f(key, value) for each field of the root object. in_place: the body
// is followed by kJsonPadding readable bytes.
template <typename F>
void ForEachRootField(std::string_view body, F&& f, bool in_place = false) {
  const char* text = body.data();
  if (!in_place || body.empty()) {
    thread_local simdjson::padded_string padded;
    // Reuse the per-thread buffer unless it is too small or much too large.
    if (padded.size() < body.size() || padded.size() > 4 * body.size() + (1 << 20)) {
      padded = simdjson::padded_string(body.size());
    }
    if (!body.empty()) std::memcpy(padded.data(), body.data(), body.size());  // data() is null when empty.
    text = padded.data();
  }
  // Parse exactly body.size() bytes; what follows is padding for simdjson.
  dom::element root;
  auto error = ThreadParser().parse(text, body.size(), false).get(root);
  if (error) throw k8s::json::DecodeError{std::string("invalid JSON: ") + simdjson::error_message(error)};
  if (root.type() != dom::element_type::OBJECT) k8s::json::Fail(Path{}, "expected a JSON object");
  for (dom::key_value_pair field : dom::object(root)) f(field.key, field.value);
}

// The root of a body with a required Pod (ExtenderArgs, ExtenderPreemptionArgs): decodes Pod into
// `pod` and calls f(key, value, path) for every other field; fails when Pod is missing or null.
template <typename F>
void ForEachFieldWithPod(std::string_view body, k8s::PodObject& pod, F&& f, bool in_place = false) {
  bool has_pod = false;
  ForEachRootField(body, [&](std::string_view key, dom::element v) {
    Path p{nullptr, key};
    if (!KeyIs(key, "Pod")) return f(key, v, p);
    if (k8s::json::IsNull(v)) return;
    pod = DecodePodValue(v, p);
    has_pod = true;
  }, in_place);
  if (!has_pod) k8s::json::Fail(Path{}, "missing Pod");
}

// {"Pods":[...],"NumPDBViolations":n}; `meta` means Pods hold only {"UID":...}.
Victims DecodeVictims(dom::element v, const Path& path, bool meta) {
  Victims out;
  k8s::json::ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "Pods")) {
      k8s::json::ForEachElement(value, p, [&](int i, dom::element pod) {
        Path pp = p.Index(i);
        if (meta) {
          std::string uid;
          k8s::json::ForEachField(pod, pp, [&](std::string_view k, dom::element f) {
            if (KeyIs(k, "UID")) uid = k8s::json::StrictString(f, pp.Field(k));
          });
          if (uid.empty()) k8s::json::Fail(pp, "missing UID");
          out.uids.push_back(std::move(uid));
        } else {
          out.pods.push_back(DecodePodValue(pod, pp));
          out.uids.push_back(out.pods.back().meta.uid);
        }
      });
    } else if (KeyIs(key, "NumPDBViolations")) {
      out.num_pdb_violations = k8s::json::Int(value, p);
    }
  });
  return out;
}

std::map<std::string, Victims> DecodeVictimMap(dom::element v, const Path& path, bool meta) {
  std::map<std::string, Victims> out;
  k8s::json::ForEachField(v, path, [&](std::string_view node, dom::element value) {
    out[std::string(node)] = DecodeVictims(value, path.Field(node), meta);
  });
  return out;
}

// metadata.name of a Node, without decoding the rest.
std::string NodeName(dom::element node, const Path& path) {
  std::string name;
  k8s::json::ForEachField(node, path, [&](std::string_view key, dom::element meta) {
    if (!KeyIs(key, "metadata")) return;
    Path mp = path.Field(key);
    k8s::json::ForEachField(meta, mp, [&](std::string_view k, dom::element v) {
      if (KeyIs(k, "name")) name = k8s::json::String(v, mp.Field(k));
    });
  });
  return name;
}

// NodeNames into args.node_names, viewing args.name_storage; a later NodeNames replaces an earlier
// one, also with null.
void DecodeNodeNames(dom::element v, const Path& p, ExtenderArgs& args) {
  args.node_names.reset();
  if (k8s::json::IsNull(v)) return;
  if (v.type() != dom::element_type::ARRAY) k8s::json::Fail(p, "expected an array of node names");
  dom::array names_json(v);
  auto& names = args.node_names.emplace();
  names.reserve(names_json.size());
  // Two passes: sizes first, so every name lands in one allocation and no view moves.
  size_t bytes = 0;
  int i = 0;
  for (dom::element name : names_json) {
    if (name.type() != dom::element_type::STRING) k8s::json::Fail(p.Index(i), "expected a string");
    bytes += std::string_view(name).size();
    ++i;
  }
  args.name_storage.resize(bytes);
  char* at = args.name_storage.data();
  for (dom::element name : names_json) {
    std::string_view n(name);
    if (!n.empty()) std::memcpy(at, n.data(), n.size());
    names.emplace_back(at, n.size());
    at += n.size();
  }
}

// The Nodes of a full-node request as parsed: their elements (for NodeJson) and how often each key
// of the path to them occurred (a later Nodes, or items, replaces an earlier one, as Go's decoder does).
struct ParsedNodes {
  std::vector<dom::element> elements;  // The Nodes of the last Nodes.items.
  int nodes_keys = 0, items_keys = 0;
};

// Nodes into args.nodes: each Node's name, and the whole Node where options.decode_node asks.
void DecodeNodes(dom::element v, const Path& p, const ExtenderArgsOptions& options, ExtenderArgs& args,
                 ParsedNodes& parsed) {
  ++parsed.nodes_keys;
  parsed.elements.clear();
  args.nodes.reset();
  if (k8s::json::IsNull(v)) return;
  auto& nodes = args.nodes.emplace();
  k8s::json::ForEachField(v, p, [&](std::string_view k, dom::element items) {
    if (!KeyIs(k, "items")) return;
    ++parsed.items_keys;
    Path ip = p.Field(k);
    nodes.clear();
    parsed.elements.clear();
    k8s::json::ForEachElement(items, ip, [&](int i, dom::element item) {
      if (item.type() != dom::element_type::OBJECT) k8s::json::Fail(ip.Index(i), "expected a Node object");
      NodeItem& n = nodes.emplace_back();
      n.name = NodeName(item, ip.Index(i));
      if (options.decode_node && options.decode_node(n.name)) n.object = DecodeNodeValue(item, ip.Index(i));
      parsed.elements.push_back(item);
    });
  });
}

// Each Node's bytes as sent, when a walk of the raw text agrees with the parse; else (keys written
// with escapes) the Node re-printed from the parse into args.json_storage. With one Nodes and one
// items key (the parse counted them) the walk may stop at the first match.
void AttachNodeJson(std::string_view body, const ParsedNodes& parsed, ExtenderArgs& args) {
  auto raw = k8s::json::RawArrayElements(body, {"Nodes", "items"}, parsed.nodes_keys == 1 && parsed.items_keys == 1);
  if (raw && raw->size() != parsed.elements.size()) raw.reset();
  args.json_storage.clear();
  for (size_t i = 0; i < parsed.elements.size(); ++i)
    (*args.nodes)[i].json =
        raw ? (*raw)[i] : std::string_view(args.json_storage.emplace_back(simdjson::minify(parsed.elements[i])));
}

}  // namespace

Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body, const ExtenderArgsOptions& options) {
  return CatchDecode<ExtenderArgs>([&]() -> Result<ExtenderArgs> {
    ExtenderArgs args;
    ParsedNodes parsed;
    ForEachFieldWithPod(body, args.pod, [&](std::string_view key, dom::element v, const Path& p) {
      if (KeyIs(key, "NodeNames")) DecodeNodeNames(v, p, args);
      else if (KeyIs(key, "Nodes")) DecodeNodes(v, p, options, args, parsed);
    }, options.padded);
    if (args.nodes) AttachNodeJson(body, parsed, args);
    return args;
  });
}

Result<BindingArgs> DecodeBindingArgs(std::string_view body) {
  return CatchDecode<BindingArgs>([&]() -> Result<BindingArgs> {
    BindingArgs args;
    ForEachRootField(body, [&](std::string_view key, dom::element v) {
      Path p{nullptr, key};
      if (KeyIs(key, "PodName")) args.pod_name = k8s::json::StrictString(v, p);
      else if (KeyIs(key, "PodNamespace")) args.pod_namespace = k8s::json::StrictString(v, p);
      else if (KeyIs(key, "PodUID")) args.pod_uid = k8s::json::StrictString(v, p);
      else if (KeyIs(key, "Node")) args.node = k8s::json::StrictString(v, p);
    });
    if (args.pod_name.empty()) k8s::json::Fail(Path{}, "missing PodName");
    if (args.node.empty()) k8s::json::Fail(Path{}, "missing Node");
    return args;
  });
}

Result<PreemptionArgs> DecodePreemptionArgs(std::string_view body) {
  return CatchDecode<PreemptionArgs>([&]() -> Result<PreemptionArgs> {
    PreemptionArgs args;
    ForEachFieldWithPod(body, args.pod, [&](std::string_view key, dom::element v, const Path& p) {
      if (KeyIs(key, "NodeNameToVictims")) args.node_to_victims = DecodeVictimMap(v, p, false);
      else if (KeyIs(key, "NodeNameToMetaVictims")) args.node_to_meta_victims = DecodeVictimMap(v, p, true);
    });
    return args;
  });
}

}  // namespace topofit::protocol
