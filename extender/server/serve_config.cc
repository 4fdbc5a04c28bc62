#include "extender/server/serve_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/files.h"
#include "extender/k8s/yaml_load.h"
#include "extender/server/serve_settings.h"

namespace topofit::server {

Status ParseListen(const std::string& listen, ServerOptions& out) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return Error{fmt::format("--listen '{}': expected ADDR:PORT", listen)};
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  int port = 0;
  try {
    size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    return Error{fmt::format("--listen '{}': the port is not a number", listen)};
  }
  if (port < 0 || port > 65535) return Error{fmt::format("--listen '{}': port out of range", listen)};
  out.host = host;
  out.port = port;
  return Status::Ok();
}

Status ParseOpsListen(const std::string& listen, ServerOptions& out) {
  if (listen.empty()) {
    out.ops_port = -1;
    return Status::Ok();
  }
  ServerOptions parsed;
  Status s = ParseListen(listen, parsed);
  if (!s.ok()) return Error{"ops " + s.error()};
  out.ops_host = parsed.host;
  out.ops_port = parsed.port;
  return Status::Ok();
}

namespace {

// Applies the mapping `map` whose keys are under `prefix` ("" at the top, "scoring." below it): a key
// of the table is read by its row, a key that only prefixes rows ("scoring") is a mapping of them.
Status ApplyMapping(const YAML::Node& map, const std::string& prefix, ServeSettings& s) {
  for (const auto& kv : map) {
    const std::string name = kv.first.as<std::string>(), key = prefix + name;
    const bool plain = name.find('.') == std::string::npos;
    if (const ServeSetting* setting = plain ? FindServeKey(key) : nullptr) {
      if (Status st = ReadSettingYaml(*setting, kv.second, s); !st.ok()) return st;
      continue;
    }
    bool section = false;
    for (const ServeSetting& row : ServeSettingsTable()) section |= plain && row.key.starts_with(key + ".");
    if (!section) {
      if (prefix.empty()) return Error{fmt::format("config: unknown key '{}'", key)};
      return Error{fmt::format("config: unknown key {}", key)};
    }
    if (Status st = ApplyMapping(kv.second, key + ".", s); !st.ok()) return st;
  }
  return Status::Ok();
}

// The YAML text applied to `s`; `empty` says it held nothing.
Status ApplyYamlText(const std::string& yaml, ServeSettings& s, bool& empty) {
  try {
    YAML::Node root = k8s::LoadYaml(yaml);  // Bounded: an alias bomb is refused (yaml_load.h).
    empty = root.IsNull();
    if (empty) return Status::Ok();
    if (!root.IsMap()) return Error{"config: expected a mapping at the top"};
    return ApplyMapping(root, "", s);
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("config: line {}: {}", e.mark.line + 1, e.msg)};
  }
}

}  // namespace

Status ApplyConfigYaml(const std::string& yaml, ServeConfig& config) {
  ServeSettings s{std::move(config), {}};
  bool empty = false;
  Status applied = ApplyYamlText(yaml, s, empty);
  config = std::move(s.config);  // What was read before an error stays applied, as it always did.
  if (!applied.ok() || empty) return applied;
  return placement::Pipeline::Validate(config.pipeline);
}

Status ApplyConfigFile(const std::string& path, ServeConfig& config) {
  auto text = ReadFile(path);
  if (!text) return Error{"--config: " + text.error()};
  Status s = ApplyConfigYaml(*text, config);
  if (!s.ok()) return Error{fmt::format("{}: {}", path, s.error())};
  return s;
}

}  // namespace topofit::server
