#include "extender/apiclient/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "base/files.h"
#include "extender/k8s/yaml_load.h"

namespace topofit::apiclient {
namespace {

// Standard base64 (kubeconfig *-data fields), tolerating whitespace and missing padding.
Result<std::string> DecodeBase64(std::string_view in, std::string_view field) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    int v = value(c);
    if (v < 0) return Error{std::string(field) + ": not valid base64"};
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string Resolve(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return std::string(base_dir) + "/" + path;
}

// Finds `name` in a kubeconfig list of {name: ..., <kind>: {...}}; returns the inner map.
Result<YAML::Node> FindNamed(const YAML::Node& root, const char* list, const char* kind,
                             const std::string& name) {
  YAML::Node items = root[list];
  if (items && items.IsSequence()) {
    for (const auto& item : items) {
      if (item["name"] && item["name"].as<std::string>() == name) {
        YAML::Node inner = item[kind];
        if (!inner || !inner.IsMap()) return YAML::Node(YAML::NodeType::Map);
        return inner;
      }
    }
  }
  return Error{std::string("kubeconfig: no ") + kind + " named '" + name + "' in " + list};
}

std::string Str(const YAML::Node& map, const char* key) {
  YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// "<field>-data" (base64) wins over "<field>" (a file), as in client-go.
Result<std::string> DataOrFile(const YAML::Node& map, const std::string& field,
                               std::string_view base_dir) {
  std::string data = Str(map, (field + "-data").c_str());
  if (!data.empty()) return DecodeBase64(data, field + "-data");
  std::string file = Str(map, field.c_str());
  if (file.empty()) return std::string();
  return ReadFile(Resolve(base_dir, file));
}

Result<ClusterConfig> ParseKubeconfigNode(const YAML::Node& root, std::string_view base_dir,
                                          std::string_view context_override) {
  if (!root.IsMap()) return Error{"kubeconfig: not a YAML map"};
  ClusterConfig cfg;
  cfg.context = context_override.empty() ? Str(root, "current-context") : std::string(context_override);
  if (cfg.context.empty()) return Error{"kubeconfig: no current-context and no context given"};
  auto ctx = FindNamed(root, "contexts", "context", cfg.context);
  if (!ctx.ok()) return Error{ctx.error()};
  std::string cluster_name = Str(*ctx, "cluster");
  std::string user_name = Str(*ctx, "user");
  if (cluster_name.empty()) return Error{"kubeconfig: context '" + cfg.context + "' names no cluster"};

  auto cluster = FindNamed(root, "clusters", "cluster", cluster_name);
  if (!cluster.ok()) return Error{cluster.error()};
  cfg.server = Str(*cluster, "server");
  if (cfg.server.empty()) return Error{"kubeconfig: cluster '" + cluster_name + "' has no server"};
  if (Status s = ParseServerUrl(cfg.server, &cfg); !s.ok()) return Error{s.error()};
  YAML::Node insecure = (*cluster)["insecure-skip-tls-verify"];
  cfg.insecure_skip_tls_verify = insecure && insecure.IsScalar() && insecure.as<bool>(false);
  cfg.tls_server_name = Str(*cluster, "tls-server-name");
  auto ca = DataOrFile(*cluster, "certificate-authority", base_dir);
  if (!ca.ok()) return Error{"kubeconfig: cluster '" + cluster_name + "': " + ca.error()};
  cfg.ca_pem = std::move(*ca);

  if (user_name.empty()) return cfg;  // Anonymous: allowed, the server decides.
  auto user = FindNamed(root, "users", "user", user_name);
  if (!user.ok()) return Error{user.error()};
  const std::string who = "kubeconfig: user '" + user_name + "': ";
  if ((*user)["exec"] || (*user)["auth-provider"])
    return Error{who + "exec and auth-provider credentials are not supported; use a token, a token "
                       "file or a client certificate"};
  auto cert = DataOrFile(*user, "client-certificate", base_dir);
  if (!cert.ok()) return Error{who + cert.error()};
  auto key = DataOrFile(*user, "client-key", base_dir);
  if (!key.ok()) return Error{who + key.error()};
  if (cert->empty() != key->empty())
    return Error{who + "client-certificate and client-key must be given together"};
  cfg.client_cert_pem = std::move(*cert);
  cfg.client_key_pem = std::move(*key);
  cfg.token = Str(*user, "token");
  std::string token_file = Str(*user, "tokenFile");
  if (!token_file.empty()) cfg.token_file = Resolve(base_dir, token_file);
  return cfg;
}

}  // namespace

Status ParseServerUrl(std::string_view url, ClusterConfig* cfg) {
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme)
    return Error{"server '" + std::string(url) + "': only https:// API servers are supported"};
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  cfg->path_prefix = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!cfg->path_prefix.empty() && cfg->path_prefix.back() == '/') cfg->path_prefix.pop_back();
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error{"server '" + std::string(url) + "': bad IPv6 host"};
    cfg->host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') port = authority.substr(close + 2);
  } else {
    size_t colon = authority.rfind(':');
    cfg->host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (cfg->host.empty()) return Error{"server '" + std::string(url) + "': no host"};
  cfg->port = 443;
  if (!port.empty()) {
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) return Error{"server '" + std::string(url) + "': bad port"};
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return Error{"server '" + std::string(url) + "': bad port"};
    cfg->port = p;
  }
  return Status::Ok();
}

Result<ClusterConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir,
                                      std::string_view context) {
  try {
    return ParseKubeconfigNode(k8s::LoadYaml(yaml), base_dir, context);
  } catch (const YAML::Exception& e) {  // yaml-cpp reports errors only by throwing.
    return Error{std::string("kubeconfig: ") + e.what()};
  }
}

Result<ClusterConfig> LoadKubeconfig(const std::string& path, std::string_view context) {
  auto text = ReadFile(path);
  if (!text.ok()) return Error{"kubeconfig: " + text.error()};
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  auto cfg = ParseKubeconfig(*text, dir, context);
  if (!cfg.ok()) return Error{path + ": " + cfg.error()};
  return cfg;
}

Result<ClusterConfig> InClusterConfig(const std::string& secrets_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return Error{"in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"};
  ClusterConfig cfg;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 service IP.
  cfg.server = "https://" + h + ":" + port;
  if (Status s = ParseServerUrl(cfg.server, &cfg); !s.ok()) return Error{"in-cluster: " + s.error()};
  auto ca = ReadFile(secrets_dir + "/ca.crt");
  if (!ca.ok()) return Error{"in-cluster: " + ca.error()};
  cfg.ca_pem = std::move(*ca);
  cfg.token_file = secrets_dir + "/token";
  cfg.context = "in-cluster";
  return cfg;
}

}  // namespace topofit::apiclient
