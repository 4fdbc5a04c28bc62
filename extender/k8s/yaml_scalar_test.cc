// The scalar rule on its own, with the JSON written out: the converter and its tree-walk oracle share
// it, so their comparison cannot check it.
#include "extender/k8s/yaml_scalar.h"

#include <doctest/doctest.h>

#include <string>

namespace topofit::k8s {
namespace {

std::string Scalar(std::string_view tag, std::string_view value) {
  std::string out;
  AppendYamlScalar(out, tag, value);
  return out;
}

}  // namespace

TEST_CASE("yaml scalar: JSON numbers by the grammar, nothing more") {
  for (const char* s : {"0", "-0", "7", "-12", "2.5", "0.25", "1e3", "1E+3", "-1.5e-7", "10"}) {
    CAPTURE(s);
    CHECK(IsJsonNumber(s));
  }
  for (const char* s : {"", "-", "01", "1.", ".5", "+1", "0x10", "1e", "1e+", "1.e3", "--1", "1 ", "inf", ".nan"}) {
    CAPTURE(s);
    CHECK_FALSE(IsJsonNumber(s));
  }
}

TEST_CASE("yaml scalar: plain scalars are null, booleans, numbers or strings - quoted ones strings") {
  CHECK(Scalar("?", "") == "null");
  CHECK(Scalar("?", "~") == "null");
  CHECK(Scalar("?", "Null") == "null");
  CHECK(Scalar("?", "nULL") == "\"nULL\"");
  CHECK(Scalar("?", "True") == "true");
  CHECK(Scalar("?", "FALSE") == "false");
  CHECK(Scalar("?", "yes") == "\"yes\"");
  CHECK(Scalar("?", "-1.5e-7") == "-1.5e-7");
  CHECK(Scalar("?", "01") == "\"01\"");
  CHECK(Scalar("?", "a \"b\"\n") == R"("a \"b\"\n")");
  CHECK(Scalar("!", "8") == "\"8\"");
  CHECK(Scalar("!", "") == "\"\"");
  CHECK(Scalar("tag:yaml.org,2002:str", "true") == "\"true\"");
}

}  // namespace topofit::k8s
