#pragma once
// ClusterConfig: where the API server is and how to authenticate to it, resolved from a kubeconfig
// file or from the in-cluster service account.
//
// Plain data, fully resolved: every file a kubeconfig names has been read into memory except the
// bearer token file, which TokenSource re-reads so that rotated tokens are picked up. Paths in a
// kubeconfig are relative to the kubeconfig's directory, as kubectl resolves them.
// TLS verification is on unless the kubeconfig cluster explicitly sets insecure-skip-tls-verify.

#include <string>
#include <string_view>

#include "base/status.h"

namespace topofit::apiclient {

struct ClusterConfig {
  // Parsed from the server URL "https://host[:port][/prefix]". Only https is accepted.
  std::string host;          // "10.0.0.1", "api.example.com" or "::1" (no brackets).
  int port = 443;
  std::string path_prefix;   // "" or "/k8s/clusters/c-1" (no trailing '/'), prepended to every path.
  std::string server;        // The URL as written, for messages.

  std::string ca_pem;               // Trusted CA bundle; empty means the system trust store.
  std::string tls_server_name;      // Name to verify instead of `host` (kubeconfig tls-server-name).
  bool insecure_skip_tls_verify = false;

  std::string client_cert_pem;      // Client certificate chain and key; both or neither.
  std::string client_key_pem;

  std::string token;                // Static bearer token...
  std::string token_file;           // ...or a file re-read periodically (wins when both are set).

  std::string context;              // The context used, for messages ("in-cluster" in a pod).
};

// Parses kubeconfig YAML. `context` overrides current-context when non-empty; `base_dir` resolves
// relative file paths. Errors name the missing or malformed field.
Result<ClusterConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir,
                                      std::string_view context = {});

// Reads and parses the kubeconfig at `path`.
Result<ClusterConfig> LoadKubeconfig(const std::string& path, std::string_view context = {});

// The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT from the environment, the token file
// and CA under `secrets_dir` (the service account mount). The token file is not read here.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
Result<ClusterConfig> InClusterConfig(const std::string& secrets_dir = kServiceAccountDir);

// Splits "https://host:port/prefix" into cfg->host/port/path_prefix.
Status ParseServerUrl(std::string_view url, ClusterConfig* cfg);

}  // namespace topofit::apiclient
