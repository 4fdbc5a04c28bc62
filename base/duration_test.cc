#include "base/duration.h"

#include <doctest/doctest.h>

#include <string>

namespace topofit {
using namespace std::chrono_literals;

TEST_CASE("ParseDuration reads Go's grammar and a bare number of seconds") {
  struct Case {
    const char* text;
    std::chrono::nanoseconds want;
  } cases[] = {
      {"30", 30s},        {"30s", 30s},       {"1.5m", 90s},      {"5m", 5min},     {"1h", 1h},
      {"250ms", 250ms},   {"1h30m", 90min},   {"2h45m10.5s", 2h + 45min + 10500ms},
      {"1.5", 1500ms},    {".5s", 500ms},     {"10us", 10us},     {"10\xc2\xb5s", 10us},
      {"7ns", 7ns},       {"1m0s", 1min},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto d = ParseDuration(c.text);
    REQUIRE(d.ok());
    CHECK(*d == c.want);
  }
}

TEST_CASE("ParseDuration refuses what is not a positive duration, saying why") {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {"", "empty"},
      {"0", "must be positive"},
      {"0s", "must be positive"},
      {"-1s", "a duration has no sign"},
      {"+1s", "a duration has no sign"},
      {"5d", "unknown unit 'd'"},
      {"s", "expected a number"},
      {"1h30", "missing unit after a number"},
      {"1.2.3s", "missing unit after a number"},
      {"1 s", "unknown unit ' s'"},
      {"3000000h", "too long"},
      {"9999999999999999999999h", "too long"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto d = ParseDuration(c.text);
    REQUIRE_FALSE(d.ok());
    CHECK(d.error().starts_with(std::string("invalid duration '") + c.text + "': " + c.why));
  }
}

TEST_CASE("FormatDuration prints what ParseDuration reads back") {
  CHECK(FormatDuration(90min) == "1h30m0s");
  CHECK(FormatDuration(1500ms) == "1.5s");
  CHECK(FormatDuration(250ms) == "250ms");
  CHECK(FormatDuration(5min) == "5m0s");
  CHECK(FormatDuration(1500us) == "1.5ms");
  CHECK(FormatDuration(7ns) == "7ns");
  CHECK(FormatDuration(0s) == "0s");
  const std::chrono::nanoseconds round_trip[] = {90min, 1500ms, 250ms, 5min, 1500us, 7ns, 2h + 45min + 10500ms};
  for (auto d : round_trip) {
    auto back = ParseDuration(FormatDuration(d));
    REQUIRE(back.ok());
    CHECK(*back == d);
  }
}

}  // namespace topofit
