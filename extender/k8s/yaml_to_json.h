#pragma once
// Converts a YAML document (a kubectl -o yaml List, a pod manifest) to JSON text, so that YAML goes
// through the same JSON decoders.
//
// Quoted scalars are strings. Plain scalars become null (~, null, empty), booleans (true/false),
// numbers when they are valid JSON numbers, and strings otherwise - so `nvidia.com/gpu: 8` and
// `nvidia.com/gpu: "8"` decode alike. Only the first document is read. Never throws.

#include <string>
#include <string_view>

#include "base/status.h"

namespace topofit::k8s {

Result<std::string> YamlToJson(std::string_view yaml);

// True when the text looks like JSON (first non-blank character is '{' or '[').
bool LooksLikeJson(std::string_view text);

}  // namespace topofit::k8s
