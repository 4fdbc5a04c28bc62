// serve, node and bench log in one format: every line they write to stderr parses as logfmt (with
// an RFC 3339 ts, a level and a msg), or as one JSON object per line with --log-format json.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <string>
#include <vector>

#include "base/strings.h"
#include "extender/cli/cli_test_util.h"
#include "test/util/logfmt_parser.h"

namespace topofit::cli {
namespace {

using testing::Topofit;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view l : Split(text, '\n'))
    if (!Trim(l).empty()) out.emplace_back(l);
  return out;
}

const std::regex kRfc3339(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

// Every stderr line as logfmt; returns the msg values in order.
std::vector<std::string> LogfmtMessages(const std::string& err) {
  std::vector<std::string> msgs;
  for (const auto& line : Lines(err)) {
    CAPTURE(line);
    auto pairs = topofit::testing::ParseLogfmt(line);
    REQUIRE(pairs);
    REQUIRE(pairs->size() >= 3);
    CHECK((*pairs)[0].first == "ts");
    CHECK(std::regex_match((*pairs)[0].second, kRfc3339));
    CHECK((*pairs)[1].first == "level");
    CHECK((*pairs)[2].first == "msg");
    msgs.push_back((*pairs)[2].second);
  }
  return msgs;
}

std::vector<std::string> JsonMessages(const std::string& err) {
  std::vector<std::string> msgs;
  for (const auto& line : Lines(err)) {
    CAPTURE(line);
    auto j = nlohmann::json::parse(line, nullptr, false);
    REQUIRE(j.is_object());
    CHECK(std::regex_match(j["ts"].get<std::string>(), kRfc3339));
    CHECK(j.contains("level"));
    msgs.push_back(j["msg"]);
  }
  return msgs;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("log format: serve's start and stop lines are logfmt, or JSON when asked") {
  // timeout sends SIGTERM after 2 s: serve drains and exits 0, timeout reports 124.
  auto r = Topofit("serve --listen 127.0.0.1:0 --ops-listen 127.0.0.1:0", "timeout -s TERM 2");
  CHECK(r.status == 124);
  auto msgs = LogfmtMessages(r.err);
  CHECK(Has(msgs, "serving"));
  CHECK(Has(msgs, "shutting down"));
  CHECK(Has(msgs, "stopped"));

  auto j = Topofit("serve --listen 127.0.0.1:0 --log-format json", "timeout -s TERM 2");
  auto jmsgs = JsonMessages(j.err);
  CHECK(Has(jmsgs, "serving"));
  CHECK(Has(jmsgs, "stopped"));
}

TEST_CASE("log format: node's lines are logfmt") {
  auto r = Topofit("node", "env -u NODE_NAME");
  CHECK(r.status == 2);
  CHECK(Has(LogfmtMessages(r.err), "no node name: pass --node-name or set NODE_NAME"));
  auto bad = Topofit("node --node-name n1 --topology-interval 5d");
  CHECK(bad.status == 2);
  CHECK(Has(LogfmtMessages(bad.err), "bad flag"));
  CHECK(bad.err.find("unknown unit 'd'") != std::string::npos);
}

TEST_CASE("log format: bench's lines are logfmt, or JSON when asked") {
  auto r = Topofit("bench synthetic --pods 60 --seeds 42 --policies random,topofit");
  CHECK(r.status == 0);
  auto msgs = LogfmtMessages(r.err);
  CHECK(Has(msgs, "bench started"));
  CHECK(Has(msgs, "bench finished"));
  auto j = Topofit("--log-format=json bench synthetic --pods 60 --seeds 42 --policies random");
  CHECK(j.status == 0);
  auto jmsgs = JsonMessages(j.err);
  CHECK(Has(jmsgs, "bench finished"));
  auto bad = Topofit("--log-format text bench synthetic --pods 10");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("log format 'text': expected logfmt or json") != std::string::npos);
}

}  // namespace
}  // namespace topofit::cli
