#pragma once
// Converts a YAML document (a kubectl -o yaml List, a pod manifest) to JSON text, so that YAML goes
// through the same JSON decoders.
//
// Quoted scalars are strings. Plain scalars become null (~, null, empty), booleans (true/false),
// numbers when they are valid JSON numbers, and strings otherwise - so `nvidia.com/gpu: 8` and
// `nvidia.com/gpu: "8"` decode alike. Only the first document is read. Never throws.
//
// Bounded work on hostile input. The conversion runs on yaml-cpp's event parser, never building a
// node tree, and writes each node once; an alias (*name) repeats the JSON already written for its
// anchor, and what aliases add is counted: past YamlLimits (by default 100,000 nodes or 4 MiB of
// JSON) the document is refused with an error that says so - a "billion laughs" of 500 bytes is
// refused after a few milliseconds and a few MiB. A document without aliases is never refused for its
// size here (its callers bound the text). Nesting deeper than max_depth is refused; an alias inside
// the node it names is refused. The conversion polls WorkDeadline (base/work_deadline.h) and stops
// with its reason when the request it serves is out of time or the server stops.
// Not errors: anchors never used, anchors redefined (an alias names the latest), duplicate keys
// (kept, in order, as yaml-cpp keeps them).

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace topofit::k8s {

inline constexpr size_t kYamlMaxAliasNodes = 100'000;
inline constexpr size_t kYamlMaxAliasBytes = 4u << 20;
inline constexpr int kYamlMaxDepth = 200;

struct YamlLimits {
  // What aliases may add to the document: nodes (each alias adds every node of the one it repeats)
  // and bytes of JSON.
  size_t max_alias_nodes = kYamlMaxAliasNodes;
  size_t max_alias_bytes = kYamlMaxAliasBytes;
  int max_depth = kYamlMaxDepth;  // Nested sequences and mappings.
};

Result<std::string> YamlToJson(std::string_view yaml, const YamlLimits& limits = {});

// True when the text looks like JSON (first non-blank character is '{' or '[').
bool LooksLikeJson(std::string_view text);

namespace yaml_internal {
// The conversion itself: appends the JSON to `out`; throws YAML::Exception on invalid YAML or past a
// limit, with the position; throws WorkStopped when WorkDeadline says stop. For yaml_load.h.
struct WorkStopped {
  std::string_view reason;
};
void Convert(std::string_view yaml, const YamlLimits& limits, std::string& out);
}  // namespace yaml_internal

}  // namespace topofit::k8s
