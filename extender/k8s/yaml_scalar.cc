#include "extender/k8s/yaml_scalar.h"

#include "base/json_writer.h"

namespace topofit::k8s {

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

// yaml-cpp's parser has already turned plain ~, null and empty scalars into nulls; the tree walk
// sees them as scalars.
void AppendYamlScalar(std::string& out, std::string_view tag, std::string_view s) {
  if (tag != "?") {  // Quoted or explicitly tagged: a string.
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

}  // namespace topofit::k8s
