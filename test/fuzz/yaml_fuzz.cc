// libFuzzer target: the YAML readers on any text. YamlToJson (small alias limits, so bombs end fast)
// must return an Error or valid JSON, never crash or run away; when it succeeds on a small input its
// JSON must equal what a walk of YAML::Load's tree writes (the converter it replaced). LoadYaml (the
// bounded YAML::Load of serve --config and kubeconfigs) may only throw YAML::Exception.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/json_writer.h"
#include "extender/k8s/yaml_load.h"
#include "extender/k8s/yaml_to_json.h"

namespace {

bool IsJsonNumber(std::string_view s) {
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < n && s[i] == '-') ++i;
  if (i < n && s[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < n && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}

// The converter before, on YAML::Load's tree (every alias expanded by the walk).
void Oracle(std::string& out, const YAML::Node& node, int depth) {
  if (depth > 200) throw YAML::Exception(node.Mark(), "nesting too deep");
  if (node.IsMap()) {
    out += '{';
    bool first = true;
    for (const auto& kv : node) {
      if (!first) out += ',';
      first = false;
      if (!kv.first.IsScalar()) throw YAML::Exception(kv.first.Mark(), "mapping keys must be scalars");
      topofit::AppendJsonString(out, kv.first.Scalar());
      out += ':';
      Oracle(out, kv.second, depth + 1);
    }
    out += '}';
  } else if (node.IsSequence()) {
    out += '[';
    for (size_t i = 0; i < node.size(); ++i) {
      if (i) out += ',';
      Oracle(out, node[i], depth + 1);
    }
    out += ']';
  } else if (!node.IsScalar()) {
    out += "null";
  } else {
    const std::string& s = node.Scalar();
    if (node.Tag() != "?") topofit::AppendJsonString(out, s);
    else if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") out += "null";
    else if (s == "true" || s == "True" || s == "TRUE") out += "true";
    else if (s == "false" || s == "False" || s == "FALSE") out += "false";
    else if (IsJsonNumber(s)) out += s;
    else topofit::AppendJsonString(out, s);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  topofit::k8s::YamlLimits limits;
  limits.max_alias_nodes = 20'000;
  limits.max_alias_bytes = 256 << 10;
  auto json = topofit::k8s::YamlToJson(text, limits);
  if (json.ok()) {
    // Valid JSON: bytes of the input pass through unchecked (the JSON decoders after it check
    // UTF-8), so non-ASCII bytes are masked before nlohmann, which would refuse bad UTF-8; a number
    // past a double's range (1e999) is valid JSON that nlohmann calls an overflow.
    std::string ascii = *json;
    for (char& c : ascii)
      if (static_cast<unsigned char>(c) >= 0x80) c = 'u';
    try {
      (void)nlohmann::json::parse(ascii);
    } catch (const nlohmann::json::parse_error&) {
      __builtin_trap();
    } catch (const nlohmann::json::out_of_range&) {
    }
    if (size < 4096) {
      std::string want;
      try {
        Oracle(want, YAML::Load(std::string(text)), 0);
      } catch (const YAML::Exception&) {
        __builtin_trap();  // The tree walk refused what the converter accepted.
      }
      if (want.empty()) want = "null";
      if (want != *json) __builtin_trap();
    }
  }
  try {
    (void)topofit::k8s::LoadYaml(text, limits);
  } catch (const YAML::Exception&) {
  }
  return 0;
}
