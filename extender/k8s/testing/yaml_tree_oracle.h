#pragma once
// YamlTreeToJson: the YAML-to-JSON converter YamlToJson replaced, kept as the oracle its tests
// (yaml_to_json_test.cc) and its fuzz target (test/fuzz/yaml_fuzz.cc) compare it with: YAML::Load
// builds the whole node tree, then a recursive walk writes it, expanding every alias as often as it
// is used - so it is unbounded on alias bombs; give it small or trusted documents only.
// Scalars follow the converter's one rule (yaml_scalar.h); what the oracle checks is the structure:
// nesting, aliases and anchors, keys, documents. Errors: invalid YAML, a mapping key that is not a
// scalar, nesting past 200 - an Error with yaml-cpp's message. Test-only; safe from any thread.

#include <yaml-cpp/yaml.h>

#include <string>

#include "base/json_writer.h"
#include "base/status.h"
#include "extender/k8s/yaml_scalar.h"

namespace topofit::k8s::testing {

// Appends the JSON of `node`; throws YAML::Exception.
inline void AppendYamlTree(std::string& out, const YAML::Node& node, int depth = 0) {
  if (depth > 200) throw YAML::Exception(node.Mark(), "nesting too deep");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: out += "null"; break;
    case YAML::NodeType::Scalar: AppendYamlScalar(out, node.Tag(), node.Scalar()); break;
    case YAML::NodeType::Sequence: {
      out += '[';
      for (size_t i = 0; i < node.size(); ++i) {
        if (i) out += ',';
        AppendYamlTree(out, node[i], depth + 1);
      }
      out += ']';
      break;
    }
    case YAML::NodeType::Map: {
      out += '{';
      bool first = true;
      for (const auto& kv : node) {
        if (!first) out += ',';
        first = false;
        if (!kv.first.IsScalar()) throw YAML::Exception(kv.first.Mark(), "mapping keys must be scalars");
        AppendJsonString(out, kv.first.Scalar());
        out += ':';
        AppendYamlTree(out, kv.second, depth + 1);
      }
      out += '}';
      break;
    }
  }
}

// The JSON of the first document of `yaml`.
inline Result<std::string> YamlTreeToJson(const std::string& yaml) {
  try {
    std::string out;
    AppendYamlTree(out, YAML::Load(yaml));
    return out;
  } catch (const YAML::Exception& e) {
    return Error{e.msg};
  }
}

}  // namespace topofit::k8s::testing
