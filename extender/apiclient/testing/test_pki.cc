#include "extender/apiclient/testing/test_pki.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace topofit::apiclient::testing {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "test_pki: %s failed\n", what);
    std::abort();
  }
}

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Check(key != nullptr, "EVP_EC_gen");
  return key;
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1, "write key");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, size_t(n));
  BIO_free(bio);
  return out;
}

std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(PEM_write_bio_X509(bio, cert) == 1, "write cert");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, size_t(n));
  BIO_free(bio);
  return out;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// Signs a certificate for `key` named `cn`; self-signed when issuer is null.
X509* MakeCert(EVP_PKEY* key, const char* cn, const char* org, X509* issuer, EVP_PKEY* issuer_key,
               bool is_ca, const char* san, long serial) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  if (org) X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char*)org, -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char*)cn, -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509* ext_issuer = issuer ? issuer : cert;
  if (is_ca) {
    AddExt(cert, ext_issuer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert, ext_issuer, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    AddExt(cert, ext_issuer, NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert, ext_issuer, NID_ext_key_usage, "serverAuth,clientAuth");
  }
  if (san) AddExt(cert, ext_issuer, NID_subject_alt_name, san);
  Check(X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

TestPki Make() {
  TestPki p;
  EVP_PKEY* ca_key = NewKey();
  X509* ca = MakeCert(ca_key, "topofit-test-ca", nullptr, nullptr, nullptr, true, nullptr, 1);
  p.ca_pem = CertPem(ca);

  EVP_PKEY* server_key = NewKey();
  X509* server = MakeCert(server_key, "kube-apiserver", nullptr, ca, ca_key, false,
                          "IP:127.0.0.1,DNS:localhost", 2);
  p.server_cert_pem = CertPem(server);
  p.server_key_pem = KeyPem(server_key);

  EVP_PKEY* client_key = NewKey();
  X509* client = MakeCert(client_key, "topofit", "system:masters", ca, ca_key, false, nullptr, 3);
  p.client_cert_pem = CertPem(client);
  p.client_key_pem = KeyPem(client_key);

  EVP_PKEY* wrong_key = NewKey();
  X509* wrong = MakeCert(wrong_key, "elsewhere", nullptr, ca, ca_key, false, "DNS:elsewhere.test", 4);
  p.wrong_name_cert_pem = CertPem(wrong);
  p.wrong_name_key_pem = KeyPem(wrong_key);

  EVP_PKEY* other_key = NewKey();
  X509* other = MakeCert(other_key, "some-other-ca", nullptr, nullptr, nullptr, true, nullptr, 5);
  p.other_ca_pem = CertPem(other);

  for (X509* c : {ca, server, client, wrong, other}) X509_free(c);
  for (EVP_PKEY* k : {ca_key, server_key, client_key, wrong_key, other_key}) EVP_PKEY_free(k);
  return p;
}

}  // namespace

const TestPki& GetTestPki() {
  static const TestPki pki = Make();
  return pki;
}

std::string Base64(const std::string& data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(data.data()), int(data.size()));
  out.resize(size_t(n));
  return out;
}

std::string KubeconfigYaml(const std::string& server, const std::string& ca_pem, const std::string& user_yaml) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n- name: c\n  cluster:\n"
         "    server: " + server + "\n    certificate-authority-data: " + Base64(ca_pem) +
         "\ncontexts:\n- name: test\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n" +
         user_yaml;
}

std::string WriteTempFile(const std::string& name, const std::string& content) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("topofit-kube-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  auto path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  return path.string();
}

}  // namespace topofit::apiclient::testing
