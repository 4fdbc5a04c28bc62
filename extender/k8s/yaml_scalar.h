#pragma once
// AppendYamlScalar: a YAML scalar's JSON, the rule yaml_to_json.h states - a quoted or explicitly
// tagged scalar (tag other than "?") is a string; a plain one is null (empty, ~, null, Null, NULL),
// a boolean (true/True/TRUE, false/False/FALSE), a number when its text is a valid JSON number
// (-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?, so 0x10, 01 and 1. stay strings), and a string otherwise.
// No error: every scalar has a JSON; string bytes are escaped, not checked (the JSON decoders after
// the conversion check UTF-8). Pure functions, safe from any thread.
// Used by the event converter (yaml_to_json.cc) and by the tree walk its tests compare it with
// (testing/yaml_tree_oracle.h), so both read scalars by one rule.

#include <string>
#include <string_view>

namespace topofit::k8s {

// True when `s` is a number by the JSON grammar.
bool IsJsonNumber(std::string_view s);

// Appends the JSON of the scalar `value` with yaml-cpp's tag `tag` ("?" for a plain scalar, anything
// else for a quoted or tagged one).
void AppendYamlScalar(std::string& out, std::string_view tag, std::string_view value);

}  // namespace topofit::k8s
