#pragma once
// ExtenderServer: the HTTP face of topofit on cpp-httplib.
//
//   POST <prefix>/filter|prioritize|bind|preempt   the extender verbs (ExtenderVerbs)
//   GET  /healthz                                  200 while the process serves
//   GET  /readyz                                   200 once the model is loaded (SetReady), else 503
//   GET  /metrics                                  Prometheus text
//   /api/v1/...                                    QueryApi
// The last four move to a second listener with ServerOptions::ops_port (--ops-listen).
//
// Transport choices, each for a measured reason: TCP_NODELAY on (the listening socket's flag is
// inherited by accepted sockets on Linux; without it keep-alive replies stall ~40 ms on delayed
// ACKs), keep-alive with no per-connection request cap (httplib's default closes every 5th
// request), a fixed thread pool (one thread per live connection: kube-scheduler holds one for the
// serial cycle plus one per concurrent bind), and a body limit (413 from httplib, turned into the
// verb's own error shape: Error in a 200 for filter and bind, a JSON 413 otherwise).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "extender/model/cluster_model.h"
#include "extender/server/extender_verbs.h"
#include "extender/server/metrics.h"
#include "extender/server/query_api.h"
#include "topology/result.h"

namespace httplib {
class Server;
}

namespace topofit::server {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8888;                         // 0: an ephemeral port (tests).
  std::string url_prefix = "/scheduler";
  size_t max_body_bytes = 64u << 20;
  int threads = 0;                         // 0: max(32, 4 x cores).
  int keep_alive_seconds = 90;             // Go's http.Transport idles connections for 90 s.
  // A separate listener for /healthz, /readyz, /metrics and /api/v1 (--ops-listen), so the verbs -
  // bind creates Bindings with topofit's RBAC - can stay on 127.0.0.1 beside kube-scheduler while
  // probes and Prometheus reach the ops port through the pod IP. ops_port -1: one listener for all.
  std::string ops_host = "0.0.0.0";
  int ops_port = -1;
};

class ExtenderServer {
 public:
  // Pointers must outlive the server.
  ExtenderServer(ServerOptions options, ExtenderVerbs* verbs, const QueryApi* query, const Metrics* metrics,
                 const model::ClusterModel* model);
  ~ExtenderServer();

  // Binds the socket; port() is valid afterwards. Errors: address in use, bad address.
  Status Bind();
  // Serves on the calling thread until Stop(). Bind() first.
  void Run();
  // Bind() (unless already bound) and Run() on a background thread.
  Status Start();
  void Stop();
  // Graceful stop before the process exits: /readyz turns 503, the listener closes (no new
  // connections, no new requests on open ones), and the call waits until no handler is running,
  // at most `drain`. Connections idling in keep-alive are not waited for - httplib would hold each
  // for keep_alive_seconds (90 s, past any termination grace period) - so the caller must exit the
  // process afterwards rather than destroy the server. True when every handler finished in time.
  bool Shutdown(std::chrono::milliseconds drain);
  int in_flight() const { return in_flight_.load(); }

  int port() const { return port_; }
  int ops_port() const { return ops_ ? ops_port_ : port_; }  // Where /metrics etc. answer.
  void SetReady(bool ready) { ready_.store(ready); }

 private:
  void Routes();
  void VerbRoutes(httplib::Server& s);
  void OpsRoutes(httplib::Server& s);
  void ErrorHandlers(httplib::Server& s);

  ServerOptions options_;
  ExtenderVerbs* verbs_;
  const QueryApi* query_;
  const Metrics* metrics_;
  const model::ClusterModel* model_;
  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<httplib::Server> ops_;  // Null unless options_.ops_port >= 0.
  std::thread thread_;
  std::thread ops_thread_;
  int ops_port_ = 0;
  std::atomic<bool> ready_{false};
  std::atomic<int> in_flight_{0};  // Handlers running now.
  int port_ = 0;
};

}  // namespace topofit::server
