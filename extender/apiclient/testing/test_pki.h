#pragma once
// TestPki: a throwaway CA with a server certificate for 127.0.0.1/localhost and a client certificate,
// made with OpenSSL in memory, for tests that talk HTTPS on loopback. EC P-256, valid one day.

#include <string>

namespace topofit::apiclient::testing {

struct TestPki {
  std::string ca_pem;
  std::string server_cert_pem, server_key_pem;   // SANs: IP 127.0.0.1, DNS localhost.
  std::string client_cert_pem, client_key_pem;   // CN topofit, O system:masters.
  std::string other_ca_pem;                      // An unrelated CA (must not be trusted).
  std::string wrong_name_cert_pem, wrong_name_key_pem;  // Signed by ca, but for "elsewhere.test" only.
};

// Aborts the test process on OpenSSL failure (test-only code).
const TestPki& GetTestPki();  // Made once per process.

std::string Base64(const std::string& data);

// A kubeconfig for `server` trusting `ca_pem`, with a user given as extra YAML lines under `user:`
// (e.g. "    token: abc\n").
std::string KubeconfigYaml(const std::string& server, const std::string& ca_pem, const std::string& user_yaml);

// Writes `content` to a fresh file under a per-process temp dir and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& content);

}  // namespace topofit::apiclient::testing
