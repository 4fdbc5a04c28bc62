#pragma once
// TlsMaterial: the parsed CA bundle and client certificate of a ClusterConfig, and the factory of
// verified HTTPS clients to the API server.
//
// Parsing happens once, in Create(), so that a bad PEM fails at start-up with a clear message.
// NewClient() gives a fresh httplib::SSLClient that verifies the server itself: chain against the
// configured CA (only the system store when the config has none), host name or IP against the
// certificate's SANs (or against tls-server-name), TLS 1.2 at least. Verification is skipped only
// when the kubeconfig said insecure-skip-tls-verify. Thread-safe after Create(); owns its OpenSSL
// objects, each client it makes holds its own references.

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

#include "base/status.h"
#include "extender/apiclient/kubeconfig.h"

namespace topofit::apiclient {

class TlsMaterial {
 public:
  static Result<std::unique_ptr<TlsMaterial>> Create(const ClusterConfig& cfg);
  ~TlsMaterial();
  TlsMaterial(const TlsMaterial&) = delete;
  TlsMaterial& operator=(const TlsMaterial&) = delete;

  // A client for cfg.host:cfg.port; an Error only if OpenSSL cannot build a context.
  Result<std::unique_ptr<httplib::SSLClient>> NewClient() const;

 private:
  TlsMaterial() = default;

  std::string host_;
  int port_ = 0;
  std::string verify_name_;
  bool insecure_ = false;
  std::vector<X509*> ca_certs_;     // Owned (one reference each).
  X509* client_cert_ = nullptr;     // Owned.
  std::vector<X509*> client_chain_; // Owned: intermediates after the leaf.
  EVP_PKEY* client_key_ = nullptr;  // Owned.
};

// Reads every certificate in a PEM bundle; an Error when there is none or one is malformed.
// The caller owns the returned references (X509_free each).
Result<std::vector<X509*>> ParsePemCertificates(const std::string& pem, const char* what);

}  // namespace topofit::apiclient
