#pragma once
// HttpServer: the HTTP face of topofit: routes requests from one or two HttpListeners.
//
//   POST <prefix>/filter|prioritize|bind|preempt   the extender verbs (ExtenderVerbs), once the model
//   POST <prefix>/prioritize-pods-without-gpus     is loaded (SetReady); before, a refusal: an Error
//                                                  in a 200 for filter and bind, a JSON 503 otherwise
//   GET  /healthz                                  200 while the process serves
//   GET  /readyz                                   200 once the model is loaded (SetReady), else 503
//   GET  /metrics                                  Prometheus text
//   /api/v1/...                                    QueryApi
//   DELETE /api/v1/pods/NS/NAME                    the pod is gone (SetPodDeleter: snapshot mode only)
//   GET  /ui                                       the web view (ui_assets.h), which polls the QueryApi
// The last five move to a second listener with ServerOptions::ops_port (--ops-listen). With TLS
// credentials the first listener (verbs, and the rest unless they moved) speaks HTTPS only.
//
// The transport (http_listener.h) keeps connections alive, reads requests whole before a worker
// sees them, puts a deadline on every handler and refuses bodies over the limit without reading
// them; this class words every refusal for its endpoint: a body over the limit is an Error in a 200
// for filter and bind, a JSON 413 otherwise; unknown paths a JSON 404.
//
// The queries (/api/v1/...: explain, nodes, overview, groups, pods, workload) are for people and tools,
// never in the scheduler's path: at most max_concurrent_queries run at once - one more gets a JSON 503
// with Retry-After: 1 at once, without running - and they run at the lowest CPU priority and within a
// CPU budget (QueryRunner: kQueryCpuCores on average; past it the same 503), so they cannot take the
// workers or the CPU that filter, prioritize, bind and preempt need; a query
// body (explain's pod) over max_query_body_bytes is a JSON 413. Shutdown() waits for the verbs only: a
// query still running is abandoned (its work sees
// WorkDeadline::Expired() and stops).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "extender/cluster/cluster_model.h"
#include "extender/server/extender_verbs.h"
#include "extender/server/http_listener.h"
#include "extender/server/metrics.h"
#include "extender/server/query_api.h"
#include "extender/server/query_runner.h"
#include "extender/server/tls_credentials.h"

namespace topofit::server {

// Queries (/api/v1/...) running at once; beyond it a 503 with Retry-After.
inline constexpr int kDefaultMaxConcurrentQueries = 4;
// A query's body (explain's pod manifest; a pod is kilobytes): beyond it a 413.
inline constexpr size_t kDefaultMaxQueryBodyBytes = 1u << 20;

// The ListenerLimits (listener_options.h) apply to both listeners.
struct ServerOptions : ListenerLimits {
  std::string host = "0.0.0.0";
  int port = 8888;                         // 0: an ephemeral port (tests).
  std::string url_prefix = "/scheduler";
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  int threads = 0;                         // 0: max(32, 4 x cores).
  // A separate listener for /healthz, /readyz, /metrics and /api/v1 (--ops-listen), so the verbs -
  // bind creates Bindings with topofit's RBAC - can stay on 127.0.0.1 beside kube-scheduler while
  // probes and Prometheus reach the ops port through the pod IP. ops_port -1: one listener for all.
  std::string ops_host = "0.0.0.0";
  int ops_port = -1;
  // HTTPS on `port` when tls.enabled() (tls_credentials.h). The ops listener, when separate, stays
  // plain HTTP: it serves no verb and nothing that writes, and kubelet's probes and Prometheus
  // reach it without certificates.
  TlsFiles tls;
  std::chrono::milliseconds tls_reload_interval{std::chrono::seconds(10)};
  int max_concurrent_queries = kDefaultMaxConcurrentQueries;
  size_t max_query_body_bytes = kDefaultMaxQueryBodyBytes;
  // The queries' CPU budget in cores (QueryRunner); 0: none. Not a setting: tests turn it off, since
  // they check answers and a sanitizer build spends 2-3x the CPU on each.
  double query_cpu_cores = kQueryCpuCores;
};

class HttpServer {
 public:
  // Pointers must outlive the server. `tls`: the credentials of options.tls (TlsCredentials::Load),
  // null for plain HTTP.
  HttpServer(ServerOptions options, ExtenderVerbs* verbs, const QueryApi* query, const Metrics* metrics,
                 const cluster::ClusterModel* model, std::shared_ptr<TlsCredentials> tls = nullptr);
  ~HttpServer();

  // Binds the socket; port() is valid afterwards. Errors: address in use, bad address.
  Status Bind();
  // Serves on the calling thread until Stop(). Bind() first.
  void Run();
  // Bind() (unless already bound) and Run() on a background thread.
  Status Start();
  void Stop();
  // Graceful stop before the process exits: /readyz turns 503, the listener closes (no new
  // connections, no new requests on open ones; idle keep-alive connections close at once), running
  // queries are told to stop, and the call waits until no verb handler is running (a bind's API
  // writes), at most `drain`. True when every verb finished in time; Stop() (or the destructor)
  // afterwards joins the workers.
  bool Shutdown(std::chrono::milliseconds drain);
  int in_flight() const;  // Handlers running now, queries included.

  int port() const { return http_->port(); }
  int ops_port() const { return ops_ ? ops_->port() : port(); }  // Where /metrics etc. answer.
  void SetReady(bool ready) { ready_.store(ready); }
  // Serves DELETE /api/v1/pods/NS/NAME with `deleter` (before Start). Without one - live mode, where
  // pods are deleted through the API server and the watch tells the model - it answers 405.
  using PodDeleter = std::function<Reply(std::string_view ns, std::string_view name)>;
  void SetPodDeleter(PodDeleter deleter) { pod_deleter_ = std::move(deleter); }

 private:
  // Answers one request: the verbs when `verbs`, /healthz, /readyz, /metrics and /api/v1 when `ops`.
  Reply Route(const HttpRequest& req, bool verbs, bool ops);
  Reply HandleVerb(const HttpRequest& req, Verb verb);
  Reply Ops(const HttpRequest& req);
  Reply Query(const HttpRequest& req);  // /api/v1/...: Ops() within the cap on queries.
  std::string TooLarge(const HttpRequest& req) const;  // Why a body over the limit was refused.

  ServerOptions options_;
  PodDeleter pod_deleter_;
  ExtenderVerbs* verbs_;
  const QueryApi* query_;
  const Metrics* metrics_;
  const cluster::ClusterModel* model_;
  std::unique_ptr<HttpListener> http_;
  std::unique_ptr<HttpListener> ops_;  // Null unless options_.ops_port >= 0.
  std::thread thread_;
  std::thread ops_thread_;
  bool bound_ = false;
  std::atomic<bool> ready_{false};
  std::atomic<int> verbs_running_{0};
  std::atomic<int> queries_running_{0};
  QueryRunner query_runner_;  // Last: the listeners' workers, stopped first, may wait in its Run().
};

}  // namespace topofit::server
