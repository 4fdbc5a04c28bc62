#include "base/strings.h"

#include <doctest/doctest.h>

namespace topofit {

TEST_CASE("Trim removes ASCII whitespace at both ends only") {
  CHECK(Trim("  a b \t\r\n") == "a b");
  CHECK(Trim("\v\fx") == "x");
  CHECK(Trim("") == "");
  CHECK(Trim(" \t ") == "");
  CHECK(Trim("x") == "x");
  CHECK(Trim("\xc2\xa0x") == "\xc2\xa0x");  // Not ASCII space: kept.
}

TEST_CASE("AsciiLower and EqualsIgnoreCase fold A-Z only") {
  CHECK(AsciiLower("NVIDIA-A100_SXM4") == "nvidia-a100_sxm4");
  CHECK(AsciiLower("\xc3\x89") == "\xc3\x89");
  CHECK(EqualsIgnoreCase("NodeNames", "nodenames"));
  CHECK_FALSE(EqualsIgnoreCase("Nodes", "NodeNames"));
  CHECK_FALSE(EqualsIgnoreCase("a[", "A{"));  // '[' and '{' differ by 0x20 but are not letters.
}

TEST_CASE("SplitLines drops \\n and \\r\\n endings, and a trailing newline adds no line") {
  auto l = SplitLines("a\r\n\nb\n");
  REQUIRE(l.size() == 3);
  CHECK(l[0] == "a");
  CHECK(l[1] == "");
  CHECK(l[2] == "b");
  CHECK(SplitLines("").empty());
  CHECK(SplitLines("x").size() == 1);
  CHECK(SplitLines("\n").size() == 1);
  CHECK(SplitLines("a\rb").size() == 1);  // A lone \r is no line break.
}

TEST_CASE("Split keeps empty pieces and never trims") {
  auto p = Split("a,,b ", ',');
  REQUIRE(p.size() == 3);
  CHECK(p[0] == "a");
  CHECK(p[1] == "");
  CHECK(p[2] == "b ");
  CHECK(Split("", ',').size() == 1);
  CHECK(Split(",", ',').size() == 2);
}

}  // namespace topofit
