#include "extender/server/tls_credentials.h"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include "base/files.h"
#include "base/log.h"
#include "base/openssl_error.h"

namespace topofit::server {
namespace {

struct X509Free {
  void operator()(X509* c) const { X509_free(c); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

std::string NameOf(X509* cert) {
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  return buf;
}

// Every certificate of a PEM file; an Error naming the flag and the file when it cannot be read or
// holds none.
Result<std::vector<X509Ptr>> ReadCertificates(const std::string& path, const char* flag) {
  auto text = ReadFile(path);
  if (!text) return Error{fmt::format("{} {}: {}", flag, path, text.error())};
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())), BIO_free);
  std::vector<X509Ptr> certs;
  ERR_clear_error();  // What is left below must come from this file.
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certs.emplace_back(c);
  // The loop ends at the end of the text (PEM_R_NO_START_LINE) or at a damaged block.
  unsigned long e = ERR_peek_last_error();
  bool clean_end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
  if (e != 0 && !clean_end) return Error{fmt::format("{} {}: a damaged PEM certificate: {}", flag, path, OpenSslError())};
  ERR_clear_error();
  if (certs.empty()) return Error{fmt::format("{} {}: no PEM certificate in the file", flag, path)};
  return certs;
}

int SelectHttp11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
                 void*) {
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;  // The client offers no http/1.1: go on without ALPN.
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// The unencrypted PEM private key of --tls-private-key-file; an Error naming the flag and the file.
Result<KeyPtr> ReadPrivateKey(const std::string& path) {
  auto key_text = ReadFile(path);
  if (!key_text) return Error{fmt::format("--tls-private-key-file {}: {}", path, key_text.error())};
  std::unique_ptr<BIO, decltype(&BIO_free)> kb(BIO_new_mem_buf(key_text->data(), static_cast<int>(key_text->size())), BIO_free);
  // An empty passphrase callback: an encrypted key fails instead of prompting on the terminal.
  auto no_pass = [](char*, int, int, void*) { return 0; };
  KeyPtr key(PEM_read_bio_PrivateKey(kb.get(), nullptr, no_pass, nullptr), EVP_PKEY_free);
  if (!key) {
    ERR_clear_error();
    return Error{fmt::format("--tls-private-key-file {}: no unencrypted PEM private key in the file", path)};
  }
  return key;
}

// Requires a client certificate signed by one of --client-ca-file's CAs (each must be a CA) and
// offers their names to clients.
Status RequireClientCertificates(SSL_CTX* ctx, const std::string& path) {
  auto cas = ReadCertificates(path, "--client-ca-file");
  if (!cas) return Error{cas.error()};
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  for (const X509Ptr& ca : *cas) {
    if (X509_check_ca(ca.get()) == 0) {
      sk_X509_NAME_pop_free(names, X509_NAME_free);
      return Error{fmt::format("--client-ca-file {}: certificate {} is not a CA (basicConstraints CA:TRUE is missing)",
                               path, NameOf(ca.get()))};
    }
    X509_STORE_add_cert(store, ca.get());
    sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca.get())));
  }
  ERR_clear_error();  // X509_STORE_add_cert of a duplicate leaves an error that is none.
  SSL_CTX_set_client_CA_list(ctx, names);  // Takes ownership; clients pick their certificate by it.
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
  return Status::Ok();
}

// "subject serial HEX" of the serving certificate, for logs.
std::string DescribeCertificate(X509* leaf) {
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), nullptr), BN_free);
  char* hex = serial ? BN_bn2hex(serial.get()) : nullptr;
  std::string out = fmt::format("{} serial {}", NameOf(leaf), hex ? hex : "?");
  OPENSSL_free(hex);
  return out;
}

// A server context from the files, every check of the header's list applied.
Result<std::shared_ptr<SSL_CTX>> BuildContext(const TlsFiles& f, std::string& describe) {
  if (f.cert_file.empty()) return Error{"--tls-cert-file is required with --tls-private-key-file or --client-ca-file"};
  if (f.key_file.empty()) return Error{"--tls-private-key-file is required with --tls-cert-file"};
  auto chain = ReadCertificates(f.cert_file, "--tls-cert-file");
  if (!chain) return Error{chain.error()};
  auto key = ReadPrivateKey(f.key_file);
  if (!key) return Error{key.error()};

  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return Error{"cannot create a TLS context: " + OpenSslError()};
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_alpn_select_cb(ctx.get(), SelectHttp11, nullptr);
  static const unsigned char kSessionContext[] = "topofit";
  SSL_CTX_set_session_id_context(ctx.get(), kSessionContext, sizeof kSessionContext - 1);
  if (SSL_CTX_use_certificate(ctx.get(), (*chain)[0].get()) != 1)
    return Error{fmt::format("--tls-cert-file {}: {}", f.cert_file, OpenSslError())};
  for (size_t i = 1; i < chain->size(); ++i)
    if (SSL_CTX_add1_chain_cert(ctx.get(), (*chain)[i].get()) != 1)
      return Error{fmt::format("--tls-cert-file {}: certificate {} of the chain: {}", f.cert_file, i + 1, OpenSslError())};
  if (SSL_CTX_use_PrivateKey(ctx.get(), key->get()) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1) {
    ERR_clear_error();
    return Error{fmt::format("--tls-private-key-file {}: the key does not belong to the certificate in {}", f.key_file,
                             f.cert_file)};
  }
  if (!f.client_ca_file.empty()) {
    if (Status s = RequireClientCertificates(ctx.get(), f.client_ca_file); !s.ok()) return Error{s.error()};
  }
  describe = DescribeCertificate((*chain)[0].get());
  return ctx;
}

}  // namespace

Result<std::shared_ptr<TlsCredentials>> TlsCredentials::Load(const TlsFiles& files, Clock::duration reload_interval) {
  std::shared_ptr<TlsCredentials> c(new TlsCredentials(files, reload_interval));
  c->loaded_ = c->Look();
  auto ctx = BuildContext(files, c->describe_);
  if (!ctx) return Error{ctx.error()};
  c->ctx_ = *ctx;
  c->next_look_ = Clock::now() + reload_interval;
  return c;
}

std::shared_ptr<SSL_CTX> TlsCredentials::Context() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ctx_;
}

std::string TlsCredentials::Describe() const {
  std::lock_guard<std::mutex> lock(mu_);
  return describe_;
}

std::vector<TlsCredentials::Stamp> TlsCredentials::Look() const {
  std::vector<Stamp> out;
  for (const std::string* path : {&files_.cert_file, &files_.key_file, &files_.client_ca_file}) {
    Stamp s;
    struct stat st {};
    if (!path->empty() && stat(path->c_str(), &st) == 0) {
      s.ok = true;
      s.dev = st.st_dev;
      s.ino = st.st_ino;
      s.size = static_cast<unsigned long long>(st.st_size);
      s.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
    }
    out.push_back(s);
  }
  return out;
}

bool TlsCredentials::Refresh() {
  {
    std::lock_guard<std::mutex> lock(refresh_mu_);
    if (Clock::now() < next_look_) return false;
  }
  return RefreshNow();
}

bool TlsCredentials::RefreshNow() {
  std::lock_guard<std::mutex> lock(refresh_mu_);
  next_look_ = Clock::now() + reload_interval_;
  std::vector<Stamp> now = Look();
  if (now == loaded_ || now == failed_) return false;
  std::string describe;
  auto ctx = BuildContext(files_, describe);
  if (!ctx) {
    failed_ = now;
    Log(LogLevel::kError, "TLS files changed but do not load; serving with the previous certificate",
        {{"error", ctx.error()}});
    return false;
  }
  loaded_ = now;
  failed_.clear();
  {
    std::lock_guard<std::mutex> l(mu_);
    ctx_ = *ctx;
    describe_ = describe;
  }
  Log(LogLevel::kInfo, "TLS certificate reloaded", {{"certificate", describe}});
  return true;
}

}  // namespace topofit::server
