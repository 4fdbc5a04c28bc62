#pragma once
// A strict logfmt reader for tests, following go-logfmt's decoder (what Loki's and Vector's logfmt
// parsers accept): pairs separated by spaces; a key is bytes above ' ' other than '=' and '"'; a value
// is bare (bytes above ' ' other than '=' and '"') or a quoted string with JSON escapes. Anything
// else - a stray quote, '=' in a bare value, an unterminated string - is an error, so a line that
// parses here parses in a log pipeline.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topofit::testing {

using LogfmtPairs = std::vector<std::pair<std::string, std::string>>;

inline std::optional<LogfmtPairs> ParseLogfmt(std::string_view line) {
  LogfmtPairs out;
  size_t i = 0;
  auto bare = [](unsigned char c) { return c > ' ' && c != '=' && c != '"' && c != 0x7f; };
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    size_t k = i;
    while (i < line.size() && bare(line[i])) ++i;
    if (i == k) return std::nullopt;
    std::string key(line.substr(k, i - k)), value;
    if (i < line.size() && line[i] == '=') {
      ++i;
      if (i < line.size() && line[i] == '"') {
        ++i;
        bool closed = false;
        while (i < line.size()) {
          char c = line[i++];
          if (c == '"') { closed = true; break; }
          if (c != '\\') { value += c; continue; }
          if (i == line.size()) return std::nullopt;
          char e = line[i++];
          switch (e) {
            case '"': case '\\': case '/': value += e; break;
            case 'n': value += '\n'; break;
            case 'r': value += '\r'; break;
            case 't': value += '\t'; break;
            case 'b': value += '\b'; break;
            case 'f': value += '\f'; break;
            case 'u': {
              if (i + 4 > line.size()) return std::nullopt;
              unsigned v = std::stoul(std::string(line.substr(i, 4)), nullptr, 16);
              if (v > 0x7f) return std::nullopt;  // The logger escapes only ASCII control bytes.
              value += char(v);
              i += 4;
              break;
            }
            default: return std::nullopt;
          }
        }
        if (!closed) return std::nullopt;
        if (i < line.size() && line[i] != ' ') return std::nullopt;
      } else {
        size_t v = i;
        while (i < line.size() && bare(line[i])) ++i;
        if (i < line.size() && line[i] != ' ') return std::nullopt;
        value = std::string(line.substr(v, i - v));
      }
    } else if (i < line.size() && line[i] != ' ') {
      return std::nullopt;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

inline std::optional<std::string> LogfmtValue(const LogfmtPairs& pairs, std::string_view key) {
  for (const auto& [k, v] : pairs)
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace topofit::testing
