#include "base/strings.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

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

TEST_CASE("NaturalLess orders digit runs as numbers and is a strict weak order") {
  std::vector<std::string> names = {"gpu-node-100", "gpu-node-10", "gpu-node-2", "gpu-node-1", "gpu-node-0",
                                    "gpu-node-01", "gpu", "gpu-node-", "rack-9/x", "rack-10", "b", "a20", "a3b"};
  std::sort(names.begin(), names.end(), NaturalLess);
  CHECK(names == std::vector<std::string>{"a3b", "a20", "b", "gpu", "gpu-node-", "gpu-node-0", "gpu-node-01",
                                          "gpu-node-1", "gpu-node-2", "gpu-node-10", "gpu-node-100", "rack-9/x",
                                          "rack-10"});
  // Longer than any integer type: compared by length, then digit by digit.
  CHECK(NaturalLess("n99999999999999999999999", "n100000000000000000000000"));
  CHECK_FALSE(NaturalLess("n100000000000000000000000", "n99999999999999999999999"));
  // Equal as numbers: bytewise, so only equal strings are equivalent.
  CHECK(NaturalLess("r007", "r7"));
  CHECK_FALSE(NaturalLess("r7", "r007"));
  CHECK_FALSE(NaturalLess("x", "x"));
  CHECK(NaturalLess("", "0"));
  // Strict weak order on every triple of a set made to collide: irreflexive, asymmetric, transitive.
  std::vector<std::string> s = {"", "0", "00", "1", "01", "a", "a0", "a00", "a1", "a01", "a10", "1a", "01a", "a-1", "Z9"};
  for (const auto& x : s) {
    CHECK_FALSE(NaturalLess(x, x));
    for (const auto& y : s) {
      if (NaturalLess(x, y)) CHECK_FALSE(NaturalLess(y, x));
      if (x != y) CHECK((NaturalLess(x, y) || NaturalLess(y, x)));
      for (const auto& z : s) {
        if (NaturalLess(x, y) && NaturalLess(y, z)) CHECK(NaturalLess(x, z));
      }
    }
  }
}

}  // namespace topofit
