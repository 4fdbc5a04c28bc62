#include "extender/apiclient/tls_material.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include "base/openssl_error.h"

namespace topofit::apiclient {
namespace {

bool IsIpAddress(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

Result<std::vector<X509*>> ParsePemCertificates(const std::string& pem, const char* what) {
  std::vector<X509*> out;
  BIO* bio = BIO_new_mem_buf(pem.data(), int(pem.size()));
  if (!bio) return Error{std::string(what) + ": " + OpenSslError()};
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) out.push_back(cert);
  // The loop ends with "no start line" at end of input; anything else is a malformed block.
  unsigned long err = ERR_peek_last_error();
  bool clean_end = ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  BIO_free(bio);
  if (out.empty() || (err != 0 && !clean_end)) {
    for (X509* c : out) X509_free(c);
    return Error{std::string(what) + ": no valid PEM certificate"};
  }
  return out;
}

Result<std::unique_ptr<TlsMaterial>> TlsMaterial::Create(const ClusterConfig& cfg) {
  std::unique_ptr<TlsMaterial> m(new TlsMaterial());
  m->host_ = cfg.host;
  m->port_ = cfg.port;
  m->verify_name_ = cfg.tls_server_name.empty() ? cfg.host : cfg.tls_server_name;
  m->insecure_ = cfg.insecure_skip_tls_verify;
  if (!cfg.ca_pem.empty()) {
    auto certs = ParsePemCertificates(cfg.ca_pem, "certificate authority");
    if (!certs.ok()) return Error{certs.error()};
    m->ca_certs_ = std::move(*certs);
  }
  if (!cfg.client_cert_pem.empty()) {
    auto chain = ParsePemCertificates(cfg.client_cert_pem, "client certificate");
    if (!chain.ok()) return Error{chain.error()};
    m->client_cert_ = chain->front();
    m->client_chain_.assign(chain->begin() + 1, chain->end());
    BIO* bio = BIO_new_mem_buf(cfg.client_key_pem.data(), int(cfg.client_key_pem.size()));
    m->client_key_ = bio ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
    BIO_free(bio);
    if (!m->client_key_) return Error{"client key: " + OpenSslError()};
    if (X509_check_private_key(m->client_cert_, m->client_key_) != 1)
      return Error{"client key does not match the client certificate"};
  }
  return m;
}

TlsMaterial::~TlsMaterial() {
  for (X509* c : ca_certs_) X509_free(c);
  for (X509* c : client_chain_) X509_free(c);
  if (client_cert_) X509_free(client_cert_);
  if (client_key_) EVP_PKEY_free(client_key_);
}

Result<std::unique_ptr<httplib::SSLClient>> TlsMaterial::NewClient() const {
  auto client = std::make_unique<httplib::SSLClient>(host_, port_, client_cert_, client_key_);
  if (!client->is_valid()) return Error{"TLS client context: " + OpenSslError()};
  SSL_CTX* ctx = client->ssl_context();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  for (X509* c : client_chain_) SSL_CTX_add1_chain_cert(ctx, c);
  // httplib's own check would add the system trust store even when the kubeconfig names a CA,
  // so it is switched off and OpenSSL verifies during the handshake: SSL_VERIFY_PEER with our store
  // and the expected name in the context's verify parameters.
  client->enable_server_certificate_verification(false);
  if (insecure_) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return client;
  }
  if (ca_certs_.empty()) {
    SSL_CTX_set_default_verify_paths(ctx);
  } else {
    X509_STORE* store = X509_STORE_new();
    for (X509* c : ca_certs_) X509_STORE_add_cert(store, c);
    SSL_CTX_set_cert_store(ctx, store);  // The context takes ownership.
  }
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  if (IsIpAddress(verify_name_)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, verify_name_.c_str());
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    X509_VERIFY_PARAM_set1_host(param, verify_name_.c_str(), 0);
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  return client;
}

}  // namespace topofit::apiclient
