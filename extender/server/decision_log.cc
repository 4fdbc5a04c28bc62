#include "extender/server/decision_log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <mutex>

namespace topofit::server {

std::string LogValue(std::string_view v) {
  bool plain = !v.empty();
  for (char c : v)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || c < 0x20) plain = false;
  if (plain) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

void LogDecision(std::string_view level, std::string_view verb, const LogFields& fields) {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::string line = fmt::format("ts={:%Y-%m-%dT%H:%M:%S}.{:03d}Z level={} verb={}",
                                 std::chrono::floor<std::chrono::seconds>(now), int(ms), level, verb);
  for (const auto& [k, v] : fields) {
    line += ' ';
    line += k;
    line += '=';
    line += LogValue(v);
  }
  line += '\n';
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace topofit::server
