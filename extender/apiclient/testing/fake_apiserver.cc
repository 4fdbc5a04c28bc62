#include "extender/apiclient/testing/fake_apiserver.h"

#include <httplib.h>
#include <openssl/pem.h>

#include <chrono>

namespace topofit::apiclient::testing {
namespace {

using json = nlohmann::json;

std::string KeyOf(const std::string& kind, const json& o) {
  const json& m = o.at("metadata");
  if (kind == "nodes" || kind == "deviceclasses" || kind == "resourceslices") return m.at("name").get<std::string>();
  return m.value("namespace", std::string("default")) + "/" + m.at("name").get<std::string>();
}

X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), int(pem.size()));
  X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return c;
}

EVP_PKEY* ReadKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), int(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return k;
}

}  // namespace

json NodeJson(const std::string& name, int gpus) {
  return {{"metadata", {{"name", name}, {"uid", "node-uid-" + name}}},
          {"spec", json::object()},
          {"status",
           {{"capacity", {{"nvidia.com/gpu", std::to_string(gpus)}}},
            {"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json PodJson(const std::string& ns, const std::string& name, const std::string& uid, int gpus,
             const std::string& node, const std::string& gpu_ids, const std::string& phase) {
  json pod = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
              {"spec",
               {{"schedulerName", "default-scheduler"},
                {"containers",
                 {{{"name", "main"},
                   {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
              {"status", {{"phase", phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  if (!gpu_ids.empty()) pod["metadata"]["annotations"] = {{"topofit.io/gpu-ids", gpu_ids}};
  return pod;
}

FakeApiServer::FakeApiServer(bool require_client_cert) {
  const TestPki& pki = GetTestPki();
  X509* cert = ReadCert(pki.server_cert_pem);
  EVP_PKEY* key = ReadKey(pki.server_key_pem);
  X509_STORE* client_ca = nullptr;
  if (require_client_cert) {
    client_ca = X509_STORE_new();
    X509* ca = ReadCert(pki.ca_pem);
    X509_STORE_add_cert(client_ca, ca);
    X509_free(ca);
  }
  server_ = std::make_unique<httplib::SSLServer>(cert, key, client_ca);  // Takes the store.
  X509_free(cert);
  EVP_PKEY_free(key);
  kinds_["nodes"];
  kinds_["pods"];
  Setup();
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  server_->stop();
  thread_.join();
}

bool FakeApiServer::Authorized(const void* request) {
  const auto& req = *static_cast<const httplib::Request*>(request);
  std::lock_guard<std::mutex> lock(mu_);
  if (tokens_.empty()) return true;
  std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0 && tokens_.count(auth.substr(7))) return true;
  ++unauthorized_;
  return false;
}

void FakeApiServer::Emit(const std::string& kind, const std::string& type, json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  if (type != "DELETED") kinds_[kind].items[KeyOf(kind, object)] = object;
  events_.push_back({rv_, kind, type, std::move(object)});
  cv_.notify_all();
}

void FakeApiServer::Put(const std::string& kind, json object) {
  std::lock_guard<std::mutex> lock(mu_);
  bool exists = kinds_[kind].items.count(KeyOf(kind, object)) > 0;
  Emit(kind, exists ? "MODIFIED" : "ADDED", std::move(object));
}

void FakeApiServer::Delete(const std::string& kind, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& items = kinds_[kind].items;
  auto it = items.find(key);
  if (it == items.end()) return;
  json object = it->second;
  items.erase(it);
  Emit(kind, "DELETED", std::move(object));
}

json FakeApiServer::Get(const std::string& kind, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& items = kinds_[kind].items;
  auto it = items.find(key);
  return it == items.end() ? json() : it->second;
}

void FakeApiServer::DeleteSilently(const std::string& kind, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  kinds_[kind].items.erase(key);
  ++rv_;
}

void FakeApiServer::DropWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  ++drop_generation_;
  cv_.notify_all();
}

void FakeApiServer::CompactHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  compacted_rv_ = rv_;
  ++compact_generation_;
  cv_.notify_all();
}

void FakeApiServer::ExpireNextContinue() {
  std::lock_guard<std::mutex> lock(mu_);
  expire_next_continue_ = true;
}

int FakeApiServer::unpaged_lists() {
  std::lock_guard<std::mutex> lock(mu_);
  return unpaged_lists_;
}

void FakeApiServer::NextWatchHttpGone() {
  std::lock_guard<std::mutex> lock(mu_);
  next_watch_gone_ = true;
}

void FakeApiServer::SetTokens(std::set<std::string> tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  tokens_ = std::move(tokens);
}

void FakeApiServer::FailNextBinding(int status, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_binding_status_ = status;
  fail_binding_message_ = message;
}

int FakeApiServer::lists(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  return kinds_[kind].lists;
}
int FakeApiServer::watches(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  return kinds_[kind].watches;
}
int FakeApiServer::unauthorized() {
  std::lock_guard<std::mutex> lock(mu_);
  return unauthorized_;
}
int FakeApiServer::bindings() {
  std::lock_guard<std::mutex> lock(mu_);
  return bindings_;
}

int FakeApiServer::pod_patches() {
  std::lock_guard<std::mutex> lock(mu_);
  return pod_patches_;
}

}  // namespace topofit::apiclient::testing
