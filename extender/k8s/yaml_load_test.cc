// LoadYaml: YAML::Load behind the bounds of YamlToJson - ordinary documents load as before, alias
// bombs and self-referencing aliases are refused with the position, before any tree is walked.
#include "extender/k8s/yaml_load.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

namespace topofit::k8s {

TEST_CASE("load yaml: ordinary documents load as YAML::Load loads them, aliases included") {
  YAML::Node n = LoadYaml("a: 1\nb: &x [p, q]\nc: *x\n");
  CHECK(n["a"].as<int>() == 1);
  CHECK(n["c"][1].as<std::string>() == "q");
  CHECK(LoadYaml("").IsNull());
  CHECK_THROWS_AS(LoadYaml("a: [unclosed"), YAML::Exception);
}

TEST_CASE("load yaml: an alias bomb and an alias inside its own anchor throw, in milliseconds") {
  std::string bomb = "a0: &a0 [lol]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) bomb += (j ? ",*a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  auto start = std::chrono::steady_clock::now();
  try {
    LoadYaml(bomb);
    FAIL("the bomb loaded");
  } catch (const YAML::ParserException& e) {
    CHECK(e.msg.find("aliases expand the document") != std::string::npos);
    CHECK(e.mark.line == 5);  // The first level past 100,000 nodes: a5, on the sixth line.
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK_THROWS_AS(LoadYaml("a: &x {b: *x}\n"), YAML::ParserException);
}

}  // namespace topofit::k8s
