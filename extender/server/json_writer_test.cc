#include "extender/server/json_writer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace topofit::server {

TEST_CASE("AppendJsonString: names pass through unchanged") {
  CHECK(JsonString("gpu-node-00042") == R"("gpu-node-00042")");
  CHECK(JsonString("") == R"("")");
}

TEST_CASE("AppendJsonString: escapes like Go's encoding/json") {
  CHECK(JsonString("a\"b") == R"("a\"b")");
  CHECK(JsonString("a\\b") == R"("a\\b")");
  CHECK(JsonString("l1\nl2\r\t") == R"("l1\nl2\r\t")");
  CHECK(JsonString("<a&b>") == R"("\u003ca\u0026b\u003e")");
  CHECK(JsonString(std::string("x\x01y", 3)) == R"("x\u0001y")");
  CHECK(JsonString("\"") == R"("\"")");  // An escape at both ends of the runs.
}

TEST_CASE("AppendJsonString: every byte value round-trips through a JSON parser") {
  std::string all;
  for (int c = 1; c < 128; ++c) all += char(c);
  all += "GPUs 0,1 (\xc3\xa9t\xc3\xa9)";  // UTF-8 passes through.
  auto parsed = nlohmann::json::parse(JsonString(all));
  CHECK(parsed.get<std::string>() == all);
}

}  // namespace topofit::server
