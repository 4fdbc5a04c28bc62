#include "extender/k8s/raw_json.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <functional>
#include <random>
#include <string>

namespace topofit::k8s::json {

TEST_CASE("raw json: elements of a nested array, byte for byte") {
  std::string_view text =
      R"( { "Pod" : {"a":[1,{"b":"}]"}]}, "Nodes": {"metadata":{}, "items" : [ {"x":"y \"q\" \\"} , [1,2],"s",-1.5e3, true ,null ] } } )";
  auto items = RawArrayElements(text, {"Nodes", "items"});
  REQUIRE(items);
  REQUIRE(items->size() == 6);
  CHECK((*items)[0] == R"({"x":"y \"q\" \\"})");
  CHECK((*items)[1] == "[1,2]");
  CHECK((*items)[2] == R"("s")");
  CHECK((*items)[3] == "-1.5e3");
  CHECK((*items)[4] == "true");
  CHECK((*items)[5] == "null");
}

TEST_CASE("raw json: keys match case-insensitively, the last one wins") {
  auto items = RawArrayElements(R"({"nodes":{"ITEMS":[1]},"Nodes":{"items":[2,3]}})", {"Nodes", "items"});
  REQUIRE(items);
  CHECK(*items == std::vector<std::string_view>{"2", "3"});
  auto empty = RawArrayElements(R"({"Nodes":{"items":[ ]}})", {"Nodes", "items"});
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("raw json: with keys known unique the first match is taken") {
  std::string_view text = R"({"a":{"b":[1]},"a":{"b":[2]}})";
  CHECK(*RawArrayElements(text, {"a", "b"}) == std::vector<std::string_view>{"2"});
  CHECK(*RawArrayElements(text, {"a", "b"}, /*keys_unique=*/true) == std::vector<std::string_view>{"1"});
}

TEST_CASE("raw json: missing paths and other shapes give nullopt") {
  CHECK_FALSE(RawArrayElements(R"({"Nodes":null})", {"Nodes", "items"}));
  CHECK_FALSE(RawArrayElements(R"({"Nodes":{"items":{}}})", {"Nodes", "items"}));
  CHECK_FALSE(RawArrayElements(R"({"Pod":{}})", {"Nodes", "items"}));
  CHECK_FALSE(RawArrayElements(R"([1])", {"Nodes"}));
  CHECK_FALSE(RawArrayElements(R"({"N\u006fdes":{"items":[1]}})", {"Nodes", "items"}));  // Escaped key.
  // An escaped key might be a later duplicate of the one wanted.
  CHECK_FALSE(RawArrayElements(R"({"Nodes":{"items":[1]},"N\u006fdes":{"items":[2]}})", {"Nodes", "items"}));
  CHECK_FALSE(RawArrayElements("", {"Nodes"}));
}

TEST_CASE("raw json: escapes at string ends and backslash runs") {
  std::string_view text = R"({"a":["\\","\"","x\\\"y",{"k\\":"\\\\"}]})";
  auto items = RawArrayElements(text, {"a"});
  REQUIRE(items);
  REQUIRE(items->size() == 4);
  CHECK((*items)[0] == R"("\\")");
  CHECK((*items)[1] == R"("\"")");
  CHECK((*items)[2] == R"("x\\\"y")");
  CHECK((*items)[3] == R"({"k\\":"\\\\"})");
}

TEST_CASE("raw json: truncated text stays in bounds") {
  for (std::string_view t : {R"({"a":["x)", R"({"a":[{"b":)", R"({"a":[1,)", R"({"a)", R"({"a":["\)"}) {
    auto items = RawArrayElements(t, {"a"});
    if (items)
      for (auto e : *items) CHECK(e.data() + e.size() <= t.data() + t.size());
  }
}

// Random documents; `long_strings`: strings up to 160 bytes with an escape in one of ~60 bytes, so
// most 64-byte blocks have no backslash (the scanner's mask path) and some do (its byte walk).
void CheckRandomDocuments(unsigned seed, bool long_strings) {
  std::mt19937 rng(seed);
  auto random_string = [&] {
    std::string s = "\"";
    int n = rng() % (long_strings ? 160 : 40);  // Across the 16- and 64-byte steps of the scanner.
    for (int i = 0; i < n; ++i) {
      switch (rng() % (long_strings ? 240 : 8)) {
        case 0: s += "\\\""; break;  // an escaped quote
        case 1: s += "\\\\"; break;  // an escaped backslash
        case 2: s += "\\u00e9"; break;
        case 3: s += "}]"; break;
        default: s += char('a' + rng() % 26);
      }
    }
    return s + "\"";
  };
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    switch (depth > (long_strings ? 5 : 3) ? rng() % 2 : rng() % 4) {
      case 0: return random_string();
      case 1: return std::to_string(int(rng() % 2000) - 1000);
      case 2: {
        std::string o = "{";
        for (int k = rng() % 4; k > 0; --k) o += random_string() + " : " + value(depth + 1) + (k > 1 ? " , " : "");
        return o + "}";
      }
      default: {
        std::string a = "[ ";
        for (int k = rng() % 4; k > 0; --k) a += value(depth + 1) + (k > 1 ? "," : "");
        return a + "]";
      }
    }
  };
  simdjson::dom::parser parser;
  int long_docs = 0;  // Several 64-byte blocks long.
  for (int doc = 0; doc < 300; ++doc) {
    std::string text = R"({"x":)" + value(0) + R"(, "items": [)";
    int n = rng() % 6;
    for (int k = 0; k < n; ++k) text += (k ? " ,\n" : "") + value(0);
    text += "]}";
    long_docs += text.size() >= 512;
    simdjson::dom::element root;
    REQUIRE_MESSAGE(!parser.parse(text).get(root), text);
    auto items = RawArrayElements(text, {"items"});
    REQUIRE(items);
    simdjson::dom::array want = root["items"].get_array();
    REQUIRE(items->size() == want.size());
    size_t k = 0;
    for (simdjson::dom::element e : want) {
      simdjson::dom::parser again;
      simdjson::dom::element got;
      REQUIRE(!again.parse(std::string((*items)[k++])).get(got));
      CHECK(simdjson::minify(got) == simdjson::minify(e));
    }
  }
  if (long_strings) CHECK(long_docs >= 100);
}

TEST_CASE("raw json: agrees with simdjson on random documents with short, escaped strings") {
  CheckRandomDocuments(7, false);
}

TEST_CASE("raw json: agrees with simdjson on random documents with long strings and rare escapes") {
  CheckRandomDocuments(11, true);
}

}  // namespace topofit::k8s::json
