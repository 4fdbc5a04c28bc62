#include "extender/k8s/yaml_load.h"

#include <string>

namespace topofit::k8s {

YAML::Node LoadYaml(std::string_view yaml, const YamlLimits& limits) {
  std::string json;
  try {
    yaml_internal::Convert(yaml, limits, json);
  } catch (const yaml_internal::WorkStopped& stopped) {
    throw YAML::ParserException(YAML::Mark::null_mark(), std::string(stopped.reason));
  }
  std::string().swap(json);
  return YAML::Load(std::string(yaml));
}

}  // namespace topofit::k8s
