#include "base/log.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <regex>
#include <string>

#include "test/util/logfmt_parser.h"

namespace topofit {
namespace {

std::chrono::system_clock::time_point At(int64_t ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

}  // namespace

TEST_CASE("a logfmt line has an RFC 3339 ts, level, msg, then the fields in order") {
  std::string line = FormatLogLine(LogFormat::kLogfmt, At(1795308001123), LogLevel::kInfo, "serving",
                                   {{"listen", "0.0.0.0:8888"}, {"nodes", "3"}});
  CHECK(line == "ts=2026-11-22T00:40:01.123Z level=info msg=\"serving\" listen=0.0.0.0:8888 nodes=3");
  auto pairs = testing::ParseLogfmt(line);
  REQUIRE(pairs);
  REQUIRE(pairs->size() == 5);
  CHECK((*pairs)[0].first == "ts");
  CHECK(std::regex_match((*pairs)[0].second, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
}

TEST_CASE("logfmt quotes what a bare value cannot hold, and the parser reads it back") {
  const std::string tricky[] = {"", "a b", "k=v", "say \"hi\"", "back\\slash", "two\nlines", "tab\tcr\r",
                                std::string("nul\0x", 5), "\x01\x7f", "caf\xc3\xa9", "plain-value_1.2:3/4"};
  for (const auto& v : tricky) {
    CAPTURE(v);
    std::string line = FormatLogLine(LogFormat::kLogfmt, At(0), LogLevel::kWarn, "shutting down", {{"v", v}});
    auto pairs = testing::ParseLogfmt(line);
    REQUIRE(pairs);
    CHECK(testing::LogfmtValue(*pairs, "msg") == "shutting down");
    CHECK(testing::LogfmtValue(*pairs, "v") == v);
    CHECK(line.find('\n') == std::string::npos);
  }
  CHECK(FormatLogLine(LogFormat::kLogfmt, At(0), LogLevel::kInfo, "m", {{"v", "plain"}}).ends_with(" v=plain"));
}

TEST_CASE("the json format writes one object per line with the same keys") {
  std::string line = FormatLogLine(LogFormat::kJson, At(1795308001123), LogLevel::kError, "watch failed",
                                   {{"kind", "Pod"}, {"error", "a \"quoted\"\nerror"}});
  auto j = nlohmann::json::parse(line);
  CHECK(j["ts"] == "2026-11-22T00:40:01.123Z");
  CHECK(j["level"] == "error");
  CHECK(j["msg"] == "watch failed");
  CHECK(j["kind"] == "Pod");
  CHECK(j["error"] == "a \"quoted\"\nerror");
  CHECK(line.starts_with(R"({"ts":"2026-11-22T00:40:01.123Z","level":"error","msg":"watch failed","kind":)"));
}

TEST_CASE("levels below the configured one are dropped, and formats and levels parse or say what is expected") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  SetLogStream(f);
  SetLogLevel(LogLevel::kWarn);
  Log(LogLevel::kInfo, "dropped");
  Log(LogLevel::kWarn, "kept", {{"k", "v"}});
  SetLogLevel(LogLevel::kInfo);
  SetLogStream(nullptr);
  std::rewind(f);
  char buf[512] = {};
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string text(buf, n);
  CHECK(text.find("dropped") == std::string::npos);
  CHECK(text.find(" level=warn msg=\"kept\" k=v\n") != std::string::npos);

  CHECK(ParseLogFormat("json").ok());
  CHECK(ParseLogFormat("text").error() == "log format 'text': expected logfmt or json");
  CHECK(*ParseLogLevel("debug") == LogLevel::kDebug);
  CHECK(ParseLogLevel("verbose").error() == "log level 'verbose': expected debug, info, warn or error");
}

TEST_CASE("log: ConfigureLog sets format and level together, or neither") {
  REQUIRE(ConfigureLog("logfmt", "warn").ok());
  CHECK_FALSE(LogEnabled(LogLevel::kInfo));
  CHECK(LogEnabled(LogLevel::kWarn));
  CHECK(ConfigureLog("text", "debug").error() == "log format 'text': expected logfmt or json");
  CHECK(ConfigureLog("text", "verbose").error() == "log format 'text': expected logfmt or json");
  CHECK(ConfigureLog("json", "verbose").error() == "log level 'verbose': expected debug, info, warn or error");
  CHECK_FALSE(LogEnabled(LogLevel::kInfo));  // Still warn: a refused call sets nothing.
  REQUIRE(ConfigureLog("logfmt", "info").ok());
  CHECK(LogEnabled(LogLevel::kInfo));
}

}  // namespace topofit
