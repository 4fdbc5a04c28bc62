#include "extender/k8s/gpu_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "base/json_writer.h"
#include "extender/k8s/json_read.h"
#include "extender/k8s/object_decoder.h"

namespace topofit::k8s {
namespace {

namespace dom = json::dom;
using json::Path;

std::string Uuid(dom::element v, const Path& path) {
  if (v.type() != dom::element_type::STRING) json::Fail(path, "expected a string");
  std::string_view s = v.get_string().value();
  if (s.empty() || s.find_first_of(" \t\r\n,") != std::string_view::npos) {
    json::Fail(path, fmt::format("'{}' is not a GPU UUID", s));
  }
  return std::string(s);
}

void CheckVersion(dom::element v, const Path& path) {
  if (v.type() != dom::element_type::INT64 && v.type() != dom::element_type::UINT64) {
    json::Fail(path, "expected the integer 1");
  }
  if (json::Int(v, path) != 1) json::Fail(path, fmt::format("version {} is not supported (only 1)", json::Int(v, path)));
}

// A record {"v": 1, "t": <unix seconds>, ...}: checks "v" (required) and reads "t" into
// unix_seconds; `field(record, key_value, path)` reads every other field, and `finish(top)` then
// fails on what is missing (after a missing "v").
template <typename T, typename Field, typename Finish>
Result<T> DecodeRecord(std::string_view text, Field&& field, Finish&& finish) {
  simdjson::padded_string padded(text);
  dom::parser parser;
  return CatchDecode<T>([&]() -> Result<T> {
    dom::element root = json::Parse(parser, padded);
    if (root.type() != dom::element_type::OBJECT) json::Fail(Path{}, "expected an object");
    T record;
    bool version = false;
    Path top;
    for (dom::key_value_pair kv : dom::object(root)) {
      Path p = top.Field(kv.key);
      if (kv.key == "v") {
        CheckVersion(kv.value, p);
        version = true;
      } else if (kv.key == "t") {
        record.unix_seconds = json::Int(kv.value, p);
      } else {
        field(record, kv, p);
      }
    }
    if (!version) json::Fail(top.Field("v"), "missing (expected 1)");
    finish(top);
    return record;
  });
}

void AppendUuids(std::string& out, const std::vector<std::string>& uuids) {
  out += '[';
  for (size_t i = 0; i < uuids.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, uuids[i]);
  }
  out += ']';
}

}  // namespace

std::vector<std::string> GpuAssignment::AllUuids() const {
  std::vector<std::string> out;
  for (const auto& [name, uuids] : containers)
    for (const auto& u : uuids)
      if (std::find(out.begin(), out.end(), u) == out.end()) out.push_back(u);
  return out;
}

const std::vector<std::string>* GpuAssignment::Find(std::string_view container) const {
  for (const auto& [name, uuids] : containers)
    if (name == container) return &uuids;
  return nullptr;
}

Result<GpuAssignment> ParseGpuAssignment(std::string_view text) {
  bool node = false, containers = false;
  auto field = [&](GpuAssignment& a, dom::key_value_pair kv, const Path& p) {
    if (kv.key == "node") {
      if (kv.value.type() != dom::element_type::STRING) json::Fail(p, "expected a string");
      a.node = std::string(kv.value.get_string().value());
      node = !a.node.empty();
    } else if (kv.key == "containers") {
      containers = true;
      if (kv.value.type() != dom::element_type::OBJECT) json::Fail(p, "expected an object");
      for (dom::key_value_pair c : dom::object(kv.value)) {
        Path cp = p.Field(c.key);
        if (c.key.empty()) json::Fail(cp, "empty container name");
        if (c.value.type() != dom::element_type::ARRAY) json::Fail(cp, "expected an array of GPU UUIDs");
        std::vector<std::string> uuids;
        json::ForEachElement(c.value, cp, [&](int i, dom::element u) {
          std::string id = Uuid(u, cp.Index(i));
          if (std::find(uuids.begin(), uuids.end(), id) != uuids.end()) {
            json::Fail(cp.Index(i), fmt::format("{} repeats", id));
          }
          uuids.push_back(std::move(id));
        });
        a.containers.emplace_back(std::string(c.key), std::move(uuids));
      }
    }
  };
  return DecodeRecord<GpuAssignment>(text, field, [&](const Path& top) {
    if (!node) json::Fail(top.Field("node"), "missing or empty");
    if (!containers) json::Fail(top.Field("containers"), "missing");
  });
}

std::string EncodeGpuAssignment(const GpuAssignment& a) {
  std::string out = "{\"v\":1,\"node\":";
  AppendJsonString(out, a.node);
  out += ",\"containers\":{";
  for (size_t i = 0; i < a.containers.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, a.containers[i].first);
    out += ':';
    AppendUuids(out, a.containers[i].second);
  }
  out += fmt::format("}},\"t\":{}}}", a.unix_seconds);
  return out;
}

Result<GpuHealthReport> ParseGpuHealth(std::string_view text) {
  bool unhealthy = false;
  auto field = [&](GpuHealthReport& r, dom::key_value_pair kv, const Path& p) {
    if (kv.key != "unhealthy") return;
    unhealthy = true;
    if (kv.value.type() != dom::element_type::ARRAY) json::Fail(p, "expected an array of GPU UUIDs");
    json::ForEachElement(kv.value, p, [&](int i, dom::element u) { r.unhealthy.push_back(Uuid(u, p.Index(i))); });
  };
  return DecodeRecord<GpuHealthReport>(text, field, [&](const Path& top) {
    if (!unhealthy) json::Fail(top.Field("unhealthy"), "missing");
  });
}

std::string EncodeGpuHealth(const GpuHealthReport& r) {
  std::string out = "{\"v\":1,\"unhealthy\":";
  AppendUuids(out, r.unhealthy);
  out += fmt::format(",\"t\":{}}}", r.unix_seconds);
  return out;
}

}  // namespace topofit::k8s
