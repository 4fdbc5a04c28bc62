#include "extender/k8s/quantity.h"

#include <doctest/doctest.h>

namespace topofit::k8s {

TEST_CASE("quantity: decimal, binary and exponent forms") {
  CHECK(*ParseValue("4") == 4);
  CHECK(*ParseMilli("500m") == 500);
  CHECK(*ParseMilli("2") == 2000);
  CHECK(*ParseMilli("0.25") == 250);
  CHECK(*ParseMilli(".5") == 500);
  CHECK(*ParseMilli("1.") == 1000);
  CHECK(*ParseValue("32Gi") == 32LL << 30);
  CHECK(*ParseValue("1Ki") == 1024);
  CHECK(*ParseValue("1.5Gi") == 3LL << 29);
  CHECK(*ParseValue("1e3") == 1000);
  CHECK(*ParseValue("1E3") == 1000);
  CHECK(*ParseValue("12e-1") == 2);  // 1.2 rounds up, like Quantity.Value()
  CHECK(*ParseValue("5k") == 5000);
  CHECK(*ParseValue("2M") == 2000000);
  CHECK(*ParseValue("+7") == 7);
  CHECK(*ParseMilli("100u") == 1);   // rounds up
  CHECK(*ParseMilli("0") == 0);
  CHECK(*ParseValue("1E") == 1000000000000000000LL);
  CHECK(*ParseValue("000123") == 123);
}

TEST_CASE("quantity: malformed text is an error") {
  for (const char* bad : {"", "abc", "1.2.3", "1Xi", "1kk", "1e", "1e+", "--1", "m", ".", "1 ", " 1",
                          "8Ei", "1e100", "1234567890123456789"}) {
    CAPTURE(bad);
    bool ok = ParseQuantity(bad).ok() && ParseValue(bad).ok();
    CHECK_FALSE(ok);
  }
}

TEST_CASE("quantity: GPU counts must be whole and non-negative") {
  CHECK(*ParseWholeCount("8") == 8);
  CHECK(*ParseWholeCount("1e1") == 10);
  CHECK(*ParseWholeCount("2000m") == 2);
  CHECK(*ParseWholeCount("0") == 0);
  auto half = ParseWholeCount("0.5");
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().find("whole") != std::string::npos);
  CHECK_FALSE(ParseWholeCount("500m").ok());
  auto neg = ParseWholeCount("-1");
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.error().find("negative") != std::string::npos);
  CHECK(*ParseWholeCount("1Ki") == 1024);
}

}  // namespace topofit::k8s
