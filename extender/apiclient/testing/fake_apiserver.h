#pragma once
// FakeApiServer: a small HTTPS Kubernetes API server on 127.0.0.1 for the kube client's tests.
//
// Serves /api/v1/nodes and /api/v1/pods (and resource.k8s.io/v1 deviceclasses, resourceslices and
// resourceclaims) as paged lists (limit/continue) and as chunked watches (resourceVersion,
// allowWatchBookmarks, timeoutSeconds, the pods' phase field selector), the same for the PodGroups of
// scheduling.k8s.io/v1alpha2 (kind kWorkloadPodGroups) and of scheduling.x-k8s.io/v1alpha1
// (kCoschedulingPodGroups: answered 404, as when its CRD is not installed, until ServeCoschedulingPodGroups), plus GET
// and merge-PATCH of a pod and POST pods/{name}/binding (409 when already bound). Tests drive it:
// add/modify/delete objects (each a new resourceVersion and a watch event), drop every watch
// mid-stream, compact history (watches get an ERROR 410 event), answer the next watch with HTTP 410,
// and change the accepted bearer token. Thread-safe; the server runs on its own thread.

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "extender/apiclient/testing/test_pki.h"

namespace httplib {
class SSLServer;
}

namespace topofit::apiclient::testing {

class FakeApiServer {
 public:
  // With require_client_cert, TLS requires a client certificate from the test CA (no token needed).
  explicit FakeApiServer(bool require_client_cert = false);
  ~FakeApiServer();

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

  static constexpr const char* kWorkloadPodGroups = "podgroups";
  static constexpr const char* kCoschedulingPodGroups = "podgroups.scheduling.x-k8s.io";
  void ServeCoschedulingPodGroups() { coscheduling_served_ = true; }

  // Objects. `kind` is "nodes", "pods", "deviceclasses", "resourceslices", "resourceclaims" or a
  // PodGroups kind above; keys are names (nodes, classes, slices) and "ns/name" (pods, claims, PodGroups).
  void Put(const std::string& kind, nlohmann::json object);  // ADDED or MODIFIED
  void Delete(const std::string& kind, const std::string& key);
  nlohmann::json Get(const std::string& kind, const std::string& key);

  // Removes an object without a watch event, as if the event was lost to compaction.
  void DeleteSilently(const std::string& kind, const std::string& key);
  void DropWatches();            // Closes every open watch without the final chunk.
  void CompactHistory();         // Older resourceVersions are gone: open watches get ERROR 410.
  void NextWatchHttpGone();      // The next watch request gets HTTP 410.
  // The next list request with a continue token gets HTTP 410 Expired (the token outlived etcd's
  // compaction), as kube-apiserver answers.
  void ExpireNextContinue();
  // Lists served so far without `limit`, for every kind.
  int unpaged_lists();
  void SetTokens(std::set<std::string> tokens);  // Empty: no bearer check.
  void FailNextBinding(int status, const std::string& message);

  // Counters.
  int lists(const std::string& kind);
  int watches(const std::string& kind);
  int unauthorized();
  int bindings();
  int pod_patches();

 private:
  struct Event {
    int64_t rv;
    std::string kind;
    std::string type;
    nlohmann::json object;
  };
  struct Collection {
    std::map<std::string, nlohmann::json> items;
    int lists = 0;
    int watches = 0;
  };
  void Setup();  // Routes: fake_apiserver_routes.cc.
  void ServeList(const void* request, void* response, const std::string& kind);
  void ServeWatch(const void* request, void* response, const std::string& kind);
  bool Authorized(const void* request);
  void Emit(const std::string& kind, const std::string& type, nlohmann::json object);  // mu_ held

  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;

  std::atomic<bool> coscheduling_served_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  // Held while a watch reply ends (DataSink::done). httplib writes the last chunk from function-local
  // static strings, initialised on first use; the library is not built for ThreadSanitizer, which then
  // cannot see the guard that orders that initialisation before other threads' reads and reports a
  // race. Ending replies one at a time orders them in a way it can see.
  std::mutex chunk_end_mu_;
  int64_t rv_ = 100;
  int64_t compacted_rv_ = 0;  // Watches from below this get 410.
  int drop_generation_ = 0;
  int compact_generation_ = 0;
  bool next_watch_gone_ = false;
  bool expire_next_continue_ = false;
  int unpaged_lists_ = 0;
  bool stopping_ = false;
  std::set<std::string> tokens_;
  std::map<std::string, Collection> kinds_;
  std::vector<Event> events_;
  int unauthorized_ = 0;
  int bindings_ = 0;
  int pod_patches_ = 0;
  int fail_binding_status_ = 0;
  std::string fail_binding_message_;
};

// Minimal objects for tests.
nlohmann::json NodeJson(const std::string& name, int gpus);
nlohmann::json PodJson(const std::string& ns, const std::string& name, const std::string& uid, int gpus,
                       const std::string& node = "", const std::string& gpu_ids = "",
                       const std::string& phase = "Pending");

}  // namespace topofit::apiclient::testing
