#include "extender/apiclient/testing/test_pki.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test/util/pki.h"
#include "test/util/temp_dir.h"

namespace topofit::apiclient::testing {
namespace {

namespace pki = topofit::testing::pki;

TestPki Make() {
  TestPki p;
  pki::Key ca_key = pki::NewKey();
  pki::Cert ca = pki::Issue(ca_key.get(), pki::CertSpec("topofit-test-ca").Ca());
  p.ca_pem = pki::Pem(ca.get());

  pki::Key server_key = pki::NewKey();
  pki::Cert server = pki::Issue(server_key.get(), pki::CertSpec("kube-apiserver").San("IP:127.0.0.1,DNS:localhost").Serial(2),
                                ca.get(), ca_key.get());
  p.server_cert_pem = pki::Pem(server.get());
  p.server_key_pem = pki::Pem(server_key.get());

  pki::Key client_key = pki::NewKey();
  pki::Cert client = pki::Issue(client_key.get(), pki::CertSpec("topofit").Org("system:masters").Serial(3), ca.get(),
                                ca_key.get());
  p.client_cert_pem = pki::Pem(client.get());
  p.client_key_pem = pki::Pem(client_key.get());

  pki::Key wrong_key = pki::NewKey();
  pki::Cert wrong = pki::Issue(wrong_key.get(), pki::CertSpec("elsewhere").San("DNS:elsewhere.test").Serial(4), ca.get(),
                               ca_key.get());
  p.wrong_name_cert_pem = pki::Pem(wrong.get());
  p.wrong_name_key_pem = pki::Pem(wrong_key.get());

  pki::Key other_key = pki::NewKey();
  pki::Cert other = pki::Issue(other_key.get(), pki::CertSpec("some-other-ca").Ca().Serial(5));
  p.other_ca_pem = pki::Pem(other.get());
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
  static const topofit::testing::TempDir dir("topofit-kube-test");
  return dir.Write(name, content);
}

}  // namespace topofit::apiclient::testing
