#pragma once
// Byte ranges inside JSON text, for echoing part of a request exactly as it was sent: a full-node
// filter reply repeats the kept Nodes, and copying their bytes is ~10x cheaper than re-printing
// them from a parsed document (simdjson's DOM keeps no source offsets).
//
// Contract: the text must already have parsed as valid JSON (the extender decoders parse with
// simdjson first). Nothing is validated again; on invalid text the results are unspecified but
// every read stays inside the text.

#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace topofit::k8s::json {

// The elements of the array reached from the root object through `path`, one object key per step,
// matched ASCII-case-insensitively against the key as written (the last occurrence wins, as in Go).
// nullopt when a step is missing or not an object/array, or a key on the way is written with escapes.
// `keys_unique`: the caller knows (from a parse) that each step's key occurs once in its object, so
// the walk stops at the first match instead of skipping the rest of the object for a later one.
std::optional<std::vector<std::string_view>> RawArrayElements(std::string_view text,
                                                              std::initializer_list<std::string_view> path,
                                                              bool keys_unique = false);

// Index just past the JSON value that starts at or after `i` (leading whitespace skipped).
size_t SkipValue(std::string_view text, size_t i);

// The lexing both scanners of JSON text share (this one and list_stream.h's), inline for their loops:
// the index of the first byte at or after `i` that is not JSON whitespace (text.size() if none);
inline size_t SkipSpace(std::string_view text, size_t i) {
  while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
  return i;
}
// text[i] being an opening quote, the index just past its closing quote, or npos when the text ends
// first (a backslash escapes the next byte; \uXXXX's digits need no care).
inline size_t StringEnd(std::string_view text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '"') return i + 1;
    if (text[i] == '\\') ++i;
  }
  return std::string_view::npos;
}

}  // namespace topofit::k8s::json
