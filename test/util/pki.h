#pragma once
// Test certificates made with OpenSSL in memory: keys (EC P-256, or RSA), certificates signed by a given CA
// or self-signed, and their PEM text. Test-only: aborts the process when OpenSSL fails.
//
//   pki::Key ca_key = pki::NewKey();
//   pki::Cert ca = pki::Issue(ca_key.get(), pki::CertSpec("test-ca").Ca());
//   pki::Key key = pki::NewKey();
//   pki::Cert cert = pki::Issue(key.get(), pki::CertSpec("server").San("IP:127.0.0.1").Serial(2), ca.get(), ca_key.get());
//   std::string pem = pki::Pem(cert.get()) + pki::Pem(key.get());

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace topofit::testing::pki {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

inline void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "test pki: %s failed\n", what);
    std::abort();
  }
}

inline Key NewKey() {
  Key key(EVP_EC_gen("P-256"));
  Check(key != nullptr, "EVP_EC_gen");
  return key;
}

inline Key NewRsaKey(unsigned bits = 2048) {
  Key key(EVP_RSA_gen(bits));
  Check(key != nullptr, "EVP_RSA_gen");
  return key;
}

// What a certificate says: pki::CertSpec("name").Ca().Serial(2), pki::CertSpec("server").San("IP:127.0.0.1").
struct CertSpec {
  std::string cn;
  std::string org;                          // "" for none.
  bool is_ca = false;                       // CA:TRUE with keyCertSign, else CA:FALSE with ext_key_usage.
  std::string ext_key_usage = "serverAuth,clientAuth";
  std::string san;                          // e.g. "IP:127.0.0.1,DNS:localhost"; "" for none.
  long serial = 1;
  long valid_seconds = 86400;               // From an hour ago.

  explicit CertSpec(std::string common_name) : cn(std::move(common_name)) {}
  CertSpec Org(std::string v) const { CertSpec c = *this; c.org = std::move(v); return c; }
  CertSpec Ca() const { CertSpec c = *this; c.is_ca = true; return c; }
  CertSpec ExtKeyUsage(std::string v) const { CertSpec c = *this; c.ext_key_usage = std::move(v); return c; }
  CertSpec San(std::string v) const { CertSpec c = *this; c.san = std::move(v); return c; }
  CertSpec Serial(long v) const { CertSpec c = *this; c.serial = v; return c; }
};

inline void AddExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  Check(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key`; self-signed when issuer is null.
inline Cert Issue(EVP_PKEY* key, const CertSpec& spec, X509* issuer = nullptr, EVP_PKEY* issuer_key = nullptr) {
  Cert cert(X509_new());
  X509* c = cert.get();
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), spec.serial);
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), spec.valid_seconds);
  X509_set_pubkey(c, key);
  X509_NAME* name = X509_get_subject_name(c);
  if (!spec.org.empty())
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(spec.org.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(spec.cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name);
  X509* ext_issuer = issuer ? issuer : c;
  if (spec.is_ca) {
    AddExt(c, ext_issuer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(c, ext_issuer, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    AddExt(c, ext_issuer, NID_basic_constraints, "critical,CA:FALSE");
    if (!spec.ext_key_usage.empty()) AddExt(c, ext_issuer, NID_ext_key_usage, spec.ext_key_usage);
  }
  if (!spec.san.empty()) AddExt(c, ext_issuer, NID_subject_alt_name, spec.san);
  Check(X509_sign(c, issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

inline std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

inline std::string Pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(PEM_write_bio_X509(bio, cert) == 1, "write cert");
  return BioText(bio);
}

inline std::string Pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1, "write key");
  return BioText(bio);
}

}  // namespace topofit::testing::pki
