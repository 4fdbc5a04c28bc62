#include "extender/apiclient/watch_event.h"

#include <doctest/doctest.h>

#include <vector>

namespace topofit::apiclient {
namespace {

std::vector<std::string> FeedAll(LineSplitter& s, const std::vector<std::string>& chunks) {
  std::vector<std::string> lines;
  for (const auto& c : chunks)
    s.Feed(c, [&](std::string_view l) { lines.emplace_back(l); return true; });
  return lines;
}

TEST_CASE("LineSplitter: lines cut anywhere across chunks come out whole") {
  LineSplitter s;
  auto lines = FeedAll(s, {"{\"a\":", "1}\n{\"b\"", ":2}\n\n{\"c\":3", "}\r\n{\"d\""});
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "{\"a\":1}");
  CHECK(lines[1] == "{\"b\":2}");
  CHECK(lines[2] == "{\"c\":3}");
  CHECK(s.pending() == 4);  // The partial last line waits for its end.
}

TEST_CASE("LineSplitter: stops when the callback does, and on overlong lines") {
  LineSplitter s;
  int n = 0;
  CHECK_FALSE(s.Feed("x\ny\nz\n", [&](std::string_view) { return ++n < 2; }));
  CHECK(n == 2);
  LineSplitter small(8);
  CHECK_FALSE(small.Feed("0123456789", [](std::string_view) { return true; }));
}

TEST_CASE("ParseWatchEvent: object events carry the object and its resourceVersion") {
  auto ev = ParseWatchEvent(
      R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"p","resourceVersion":"42"}}})");
  REQUIRE(ev.ok());
  CHECK(ev->type == WatchEvent::Type::Modified);
  CHECK(ev->resource_version == "42");
  CHECK(ev->object["metadata"]["name"] == "p");
  CHECK(ParseWatchEvent(R"({"type":"ADDED","object":{}})")->type == WatchEvent::Type::Added);
  CHECK(ParseWatchEvent(R"({"type":"DELETED","object":{}})")->type == WatchEvent::Type::Deleted);
}

TEST_CASE("ParseWatchEvent: bookmarks carry only a resourceVersion") {
  auto ev = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12345","annotations":{"k8s.io/initial-events-end":"true"}}}})");
  REQUIRE(ev.ok());
  CHECK(ev->type == WatchEvent::Type::Bookmark);
  CHECK(ev->resource_version == "12345");
}

TEST_CASE("ParseWatchEvent: ERROR 410 Gone") {
  auto ev = ParseWatchEvent(
      R"J({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}})J");
  REQUIRE(ev.ok());
  CHECK(ev->type == WatchEvent::Type::Error);
  CHECK(ev->code == 410);
  CHECK(ev->message == "too old resource version: 5 (9)");
}

TEST_CASE("ParseWatchEvent: malformed lines are errors, not exceptions") {
  CHECK_FALSE(ParseWatchEvent("{\"type\":\"ADDED\"").ok());
  CHECK_FALSE(ParseWatchEvent("[]").ok());
  CHECK_FALSE(ParseWatchEvent(R"({"type":"ADDED"})").ok());
  CHECK_FALSE(ParseWatchEvent(R"({"type":"WEIRD","object":{}})").ok());
  CHECK_FALSE(ParseWatchEvent(R"({"type":7,"object":{}})").ok());
}

}  // namespace
}  // namespace topofit::apiclient
