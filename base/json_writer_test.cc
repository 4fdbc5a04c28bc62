#include "base/json_writer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace topofit {

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

TEST_CASE("IsPlain: every byte value at every position of short and long strings, as the byte table says") {
  for (size_t length : {1, 15, 16, 17, 27, 31, 32, 33, 64}) {
    for (size_t pos = 0; pos < length; ++pos) {
      for (int c = 0; c < 256; ++c) {
        std::string s(length, 'a');
        s[pos] = static_cast<char>(c);
        const bool want = !json_writer_internal::NeedsEscape(static_cast<unsigned char>(c));
        if (json_writer_internal::IsPlain(s) != want) {
          FAIL("length " << length << " position " << pos << " byte " << c);
        }
      }
    }
  }
  CHECK(json_writer_internal::IsPlain("ip-10-0-1-23.ec2.internal-x"));
  CHECK_FALSE(json_writer_internal::IsPlain("ip-10-0-1-23.ec2.internal<x"));
}

TEST_CASE("JsonBuffer: thousands of entries, grown as needed, match AppendJsonString") {
  std::string expected = "prefix:", out = "prefix:";
  {
    JsonBuffer buf(out);
    for (int i = 0; i < 5000; ++i) {
      // Mostly plain names, every seventh with bytes to escape, some long.
      std::string name = "ip-10-0-" + std::to_string(i) + (i % 7 == 0 ? "<\"\n>" : "") + std::string(i % 50, 'x');
      buf.Reserve(JsonBuffer::MaxJsonBytes(name) + 1);
      if (i) buf.Put(',');
      buf.PutJson(name);
      if (i) expected += ',';
      AppendJsonString(expected, name);
    }
    buf.Reserve(2);
    buf.Put("]}");
    expected += "]}";
  }  // Destruction trims the scratch past the written bytes.
  CHECK(out == expected);
}

TEST_CASE("JsonBuffer: Finish leaves the string as written, nothing written changes nothing") {
  std::string out = "x";
  {
    JsonBuffer buf(out);
  }
  CHECK(out == "x");
  JsonBuffer buf(out);
  buf.Reserve(5);
  buf.PutJson("");
  buf.PutJson(std::string_view());  // data() null: an empty NodeNames entry decodes to one.
  buf.Put(std::string_view());
  buf.Put('!');
  buf.Finish();
  CHECK(out == R"(x""""!)");
}

}  // namespace topofit
