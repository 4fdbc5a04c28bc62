#pragma once
// Minimal JSON text building for replies on the hot path (filter with 5,000 names must cost
// microseconds; a DOM library would allocate per node). Escapes like Go's encoding/json does for
// the characters that matter (quotes, backslash, control characters, and <, >, & as \u003c...).

#include <cstdint>
#include <string>
#include <string_view>

namespace topofit::server {

inline void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': case '>': case '&':
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += char(c);
        }
    }
  }
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
