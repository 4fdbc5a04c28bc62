#include "extender/k8s/yaml_to_json.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/json_writer.h"

namespace topofit::k8s {
namespace {

// The JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
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

void AppendScalar(std::string& out, const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() != "?") {  // Quoted or explicitly tagged: a string.
    AppendJsonString(out, s);
  } else if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    out += "null";
  } else if (s == "true" || s == "True" || s == "TRUE") {
    out += "true";
  } else if (s == "false" || s == "False" || s == "FALSE") {
    out += "false";
  } else if (IsJsonNumber(s)) {
    out += s;
  } else {
    AppendJsonString(out, s);
  }
}

void Append(std::string& out, const YAML::Node& node, int depth) {
  if (depth > 200) throw YAML::Exception(node.Mark(), "nesting too deep");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: out += "null"; break;
    case YAML::NodeType::Scalar: AppendScalar(out, node); break;
    case YAML::NodeType::Sequence: {
      out += '[';
      bool first = true;
      for (const auto& item : node) {
        if (!first) out += ',';
        first = false;
        Append(out, item, depth + 1);
      }
      out += ']';
      break;
    }
    case YAML::NodeType::Map: {
      out += '{';
      bool first = true;
      for (const auto& kv : node) {
        if (!first) out += ',';
        first = false;
        if (!kv.first.IsScalar()) throw YAML::Exception(kv.first.Mark(), "mapping keys must be scalars");
        AppendJsonString(out, kv.first.Scalar());
        out += ':';
        Append(out, kv.second, depth + 1);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace

Result<std::string> YamlToJson(std::string_view yaml) {
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    std::string out;
    out.reserve(yaml.size());
    Append(out, root, 0);
    return out;
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Error{fmt::format("invalid YAML: {}", e.msg)};
    return Error{fmt::format("invalid YAML: line {}, column {}: {}", e.mark.line + 1,
                             e.mark.column + 1, e.msg)};
  } catch (const std::exception& e) {
    return Error{fmt::format("invalid YAML: {}", e.what())};
  }
}

bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

}  // namespace topofit::k8s
