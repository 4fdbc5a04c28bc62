#pragma once
// Minimal JSON text building for replies on the hot path (filter with 5,000 names must cost
// microseconds; a DOM library would allocate per node). Escapes like Go's encoding/json does for
// the characters that matter (quotes, backslash, control characters, and <, >, & as \u003c...).

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace topofit::server {

namespace json_writer_internal {
// True for the bytes AppendJsonString must escape.
constexpr bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'; }
}  // namespace json_writer_internal

inline void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t first = 0;
  while (first < s.size() && !json_writer_internal::NeedsEscape(static_cast<unsigned char>(s[first]))) ++first;
  if (first == s.size()) {
    // The common case (every Kubernetes name): one resize, one copy.
    size_t at = out.size();
    out.resize(at + s.size() + 2);
    char* p = out.data() + at;
    p[0] = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    return;
  }
  out += '"';
  size_t run = 0;  // Runs of plain bytes are appended in one piece.
  for (size_t i = first; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (!json_writer_internal::NeedsEscape(c)) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:  // Control characters, and <, >, & as Go writes them.
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

inline std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

// {"error":"..."} - the body of 4xx replies of prioritize, preempt and the query endpoints.
inline std::string JsonError(std::string_view message) {
  std::string out = "{\"error\":";
  AppendJsonString(out, message);
  out += '}';
  return out;
}

}  // namespace topofit::server
