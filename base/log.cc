#include "base/log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>

#include "base/json_writer.h"

namespace topofit {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kLogfmt};
std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::atomic<std::FILE*> g_stream{nullptr};  // nullptr: stderr (not a constant initializer).

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (unsigned char c : v)
    if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c >= 0x7f) return true;
  return false;
}

void AppendLogfmt(std::string& out, std::string_view key, std::string_view value) {
  if (!out.empty()) out += ' ';
  out += key;
  out += '=';
  if (NeedsQuotes(value)) AppendJsonString(out, value);
  else out += value;
}

void AppendJson(std::string& out, std::string_view key, std::string_view value) {
  out += out.size() > 1 ? "," : "";
  AppendJsonString(out, key);
  out += ':';
  AppendJsonString(out, value);
}

}  // namespace

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "logfmt") return LogFormat::kLogfmt;
  if (text == "json") return LogFormat::kJson;
  return Error{fmt::format("log format '{}': expected logfmt or json", text)};
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError})
    if (text == ToString(l)) return l;
  return Error{fmt::format("log level '{}': expected debug, info, warn or error", text)};
}

std::string_view ToString(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

void SetLogFormat(LogFormat format) { g_format.store(format); }
void SetLogLevel(LogLevel level) { g_level.store(level); }

Status ConfigureLog(std::string_view format_text, std::string_view level_text) {
  auto format = ParseLogFormat(format_text);
  auto level = ParseLogLevel(level_text);
  if (!format) return Error{format.error()};
  if (!level) return Error{level.error()};
  SetLogFormat(*format);
  SetLogLevel(*level);
  return Status::Ok();
}
void SetLogStream(std::FILE* stream) { g_stream.store(stream); }
bool LogEnabled(LogLevel level) { return level >= g_level.load(std::memory_order_relaxed); }

std::string FormatLogLine(LogFormat format, std::chrono::system_clock::time_point ts, LogLevel level,
                          std::string_view msg, const LogFields& fields) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(ts.time_since_epoch()).count() % 1000;
  if (ms < 0) ms += 1000;
  std::string when = fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                                 std::chrono::floor<std::chrono::seconds>(ts), int(ms));
  std::string out;
  out.reserve(64 + msg.size() + fields.size() * 24);
  if (format == LogFormat::kJson) {
    out += '{';
    AppendJson(out, "ts", when);
    AppendJson(out, "level", ToString(level));
    AppendJson(out, "msg", msg);
    for (const auto& [k, v] : fields) AppendJson(out, k, v);
    out += '}';
    return out;
  }
  AppendLogfmt(out, "ts", when);
  AppendLogfmt(out, "level", ToString(level));
  out += " msg=";
  AppendJsonString(out, msg);  // Always quoted: a message is prose, and grep for msg="..." always works.
  for (const auto& [k, v] : fields) AppendLogfmt(out, k, v);
  return out;
}

void Log(LogLevel level, std::string_view msg, const LogFields& fields) {
  if (!LogEnabled(level)) return;
  std::string line = FormatLogLine(g_format.load(), std::chrono::system_clock::now(), level, msg, fields);
  line += '\n';
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::FILE* out = g_stream.load();
  if (!out) out = stderr;
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace topofit
