#pragma once
// The logger: every subcommand's diagnostics, one line per event, to stderr, in one format.
//
//   logfmt (default): ts=2026-11-22T00:40:01.123Z level=info msg="serving" listen=0.0.0.0:8888
//   json:             {"ts":"2026-11-22T00:40:01.123Z","level":"info","msg":"serving","listen":"0.0.0.0:8888"}
//
// `ts` is RFC 3339 in UTC with milliseconds; `level` is debug, info, warn or error; `msg` a short
// constant phrase, always quoted; then the fields in the order given. A field's value is quoted when
// it is empty or holds a space, '=', '"', '\\', a control character or a non-ASCII byte, and is then
// written as a JSON string (base/json_writer.h), so every line parses with go-logfmt (Loki, Vector,
// fluent-bit).
// Contract: lines below the configured level are dropped; each line is written whole with one write
// under a mutex, so concurrent callers never interleave. Logging never fails and never throws.
// The configuration is process-wide; set it once at start-up (SetLogFormat, SetLogLevel).

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace topofit {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kLogfmt, kJson };

using LogFields = std::vector<std::pair<std::string_view, std::string>>;

// "logfmt" or "json"; anything else is an Error listing both.
Result<LogFormat> ParseLogFormat(std::string_view text);
// "debug", "info", "warn" or "error"; anything else is an Error listing them.
Result<LogLevel> ParseLogLevel(std::string_view text);
std::string_view ToString(LogLevel level);

void SetLogFormat(LogFormat format);
void SetLogLevel(LogLevel level);
// The --log-format and --log-level of a command: parses both and sets both; an Error (the format's
// first) sets neither.
Status ConfigureLog(std::string_view format, std::string_view level);
// Where lines go (stderr by default); tests point it at a temporary file.
void SetLogStream(std::FILE* stream);
bool LogEnabled(LogLevel level);

// Writes one line at `level` (dropped below the configured level).
void Log(LogLevel level, std::string_view msg, const LogFields& fields = {});

// The line Log writes, without the newline: a pure function of its arguments.
std::string FormatLogLine(LogFormat format, std::chrono::system_clock::time_point ts, LogLevel level,
                          std::string_view msg, const LogFields& fields);

}  // namespace topofit
