// libFuzzer target: the YAML readers on any text. YamlToJson (small alias limits, so bombs end fast)
// must return an Error or valid JSON, never crash or run away; when it succeeds on a small input its
// JSON must equal what a walk of YAML::Load's tree writes (the converter it replaced, kept as
// extender/k8s/testing/yaml_tree_oracle.h). LoadYaml (the bounded YAML::Load of serve --config and
// kubeconfigs) may only throw YAML::Exception.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "extender/k8s/testing/yaml_tree_oracle.h"
#include "extender/k8s/yaml_load.h"
#include "extender/k8s/yaml_to_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  topofit::k8s::YamlLimits limits;
  limits.max_alias_nodes = 20'000;
  limits.max_alias_bytes = 256 << 10;
  auto json = topofit::k8s::YamlToJson(text, limits);
  if (json.ok()) {
    // Valid JSON: bytes of the input pass through unchecked (the JSON decoders after it check
    // UTF-8), so non-ASCII bytes are masked before nlohmann, which would refuse bad UTF-8; a number
    // past a double's range (1e999) is valid JSON that nlohmann calls an overflow.
    std::string ascii = *json;
    for (char& c : ascii)
      if (static_cast<unsigned char>(c) >= 0x80) c = 'u';
    try {
      (void)nlohmann::json::parse(ascii);
    } catch (const nlohmann::json::parse_error&) {
      __builtin_trap();
    } catch (const nlohmann::json::out_of_range&) {
    }
    if (size < 4096) {
      auto want = topofit::k8s::testing::YamlTreeToJson(std::string(text));
      if (!want.ok()) __builtin_trap();  // The tree walk refused what the converter accepted.
      if (*want != *json) __builtin_trap();
    }
  }
  try {
    (void)topofit::k8s::LoadYaml(text, limits);
  } catch (const YAML::Exception&) {
  }
  return 0;
}
