#include "extender/server/serve_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/duration.h"
#include "base/files.h"
#include "extender/k8s/yaml_load.h"

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

Status ApplyConfigYaml(const std::string& yaml, ServeConfig& config) {
  try {
    YAML::Node root = k8s::LoadYaml(yaml);  // Bounded: an alias bomb is refused (yaml_load.h).
    if (root.IsNull()) return Status::Ok();
    if (!root.IsMap()) return Error{"config: expected a mapping at the top"};
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "listen") {
        Status s = ParseListen(v.as<std::string>(), config.server);
        if (!s.ok()) return s;
      } else if (key == "opsListen") {
        Status s = ParseOpsListen(v.as<std::string>(), config.server);
        if (!s.ok()) return s;
      } else if (key == "urlPrefix") {
        config.server.url_prefix = v.as<std::string>();
      } else if (key == "maxBodyBytes") {
        config.server.max_body_bytes = v.as<size_t>();
      } else if (key == "threads") {
        config.server.threads = v.as<int>();
      } else if (key == "tlsCertFile") {
        config.server.tls.cert_file = v.as<std::string>();
      } else if (key == "tlsPrivateKeyFile") {
        config.server.tls.key_file = v.as<std::string>();
      } else if (key == "clientCAFile") {
        config.server.tls.client_ca_file = v.as<std::string>();
      } else if (key == "tlsReloadInterval") {
        auto d = ParseDuration(v.as<std::string>());
        if (!d) return Error{"config tlsReloadInterval: " + d.error()};
        config.server.tls_reload_interval = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
      } else if (key == "filterKeepsBest") {
        config.pipeline.filter_keeps_best = v.as<bool>();
      } else if (key == "reservationTTL") {
        auto d = ParseDuration(v.as<std::string>());
        if (!d) return Error{"config reservationTTL: " + d.error()};
        config.model.reservation_ttl = std::chrono::duration_cast<model::Duration>(*d);
      } else if (key == "scoring") {
        for (const auto& s : v) {
          std::string sk = s.first.as<std::string>();
          if (sk == "weights") {
            config.pipeline.weights.clear();
            for (const auto& w : s.second) config.pipeline.weights[w.first.as<std::string>()] = w.second.as<double>();
          } else if (sk == "requestMix") {
            config.pipeline.mix.entries.clear();
            for (const auto& e : s.second)
              config.pipeline.mix.entries.push_back({e["size"].as<int>(), e["weight"].as<uint32_t>()});
          } else if (sk == "levels") {
            std::string lv = s.second.as<std::string>();
            if (lv != "relative" && lv != "absolute")
              return Error{fmt::format("config scoring.levels: '{}' is not relative or absolute", lv)};
            config.pipeline.relative_levels = lv == "relative";
          } else if (sk == "tieBreak") {
            std::string tb = s.second.as<std::string>();
            auto rule = model::ParseTieBreak(tb);
            if (!rule)
              return Error{fmt::format("config scoring.tieBreak: '{}' is not fit-then-pack, pack or none", tb)};
            config.pipeline.tie_break = *rule;
          } else if (sk == "podsWithoutGpus") {
            config.pipeline.score_pods_without_gpus = s.second.as<bool>();
          } else if (sk == "workloadHalfLife") {
            double h = s.second.as<double>();
            if (!(h >= 1)) return Error{fmt::format("config scoring.workloadHalfLife: {} is not a pod count >= 1", h)};
            config.pipeline.workload.half_life = h;
          } else {
            return Error{fmt::format("config: unknown key scoring.{}", sk)};
          }
        }
      } else {
        return Error{fmt::format("config: unknown key '{}'", key)};
      }
    }
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("config: line {}: {}", e.mark.line + 1, e.msg)};
  }
  return model::Pipeline::Validate(config.pipeline);
}

Status ApplyConfigFile(const std::string& path, ServeConfig& config) {
  auto text = ReadFile(path);
  if (!text) return Error{"--config: " + text.error()};
  Status s = ApplyConfigYaml(*text, config);
  if (!s.ok()) return Error{fmt::format("{}: {}", path, s.error())};
  return s;
}

}  // namespace topofit::server
