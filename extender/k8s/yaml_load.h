#pragma once
// LoadYaml: yaml-cpp's YAML::Load for the readers that walk a node tree (`serve --config`, kubeconfig
// files), with the bounds of yaml_to_json.h first: the text is converted once with YamlLimits, and
// only a document that passes is loaded. So an alias bomb in a config file or a kubeconfig is refused
// in milliseconds, before anything walks it, and an alias inside the node it names (a cycle yaml-cpp
// would build) never reaches the caller.
//
// Contract: throws what YAML::Load throws (YAML::Exception, with the position), and a
// YAML::ParserException with the position for a document past the limits, so the callers' existing
// error wording applies. Only the first document is read. Mapping keys must be scalars.

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "extender/k8s/yaml_to_json.h"

namespace topofit::k8s {

YAML::Node LoadYaml(std::string_view yaml, const YamlLimits& limits = {});

}  // namespace topofit::k8s
