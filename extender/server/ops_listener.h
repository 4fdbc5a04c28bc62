#pragma once
// OpsListener: /healthz, /readyz and /metrics for a topofit process other than the extender (`topofit
// node`), on an HttpListener of its own: plain HTTP, GET only, 4 workers (kubelet's two probes and a
// Prometheus scraper) and the listener's extra one for the probes. HttpListener's limits hold here too
// (listener_options.h): stalled, partial and idle connections hold no worker, so the probes answer
// whatever else connects (hostile_clients_test.cc tries 200 stalled connections). The answers come
// from three callbacks, called on a worker thread each time:
//   GET /healthz   200 with the probe's body when `live` says ok, else 503 with it (text/plain)
//   GET /readyz    the same with `ready`
//   GET /metrics   200, Prometheus text (version 0.0.4) from `metrics`
// Anything else is a JSON 404 (405 for another method on those paths). `topofit serve` serves the
// same three paths from HttpServer (http_server.h), with its model's readiness.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "extender/server/http_listener.h"
#include "extender/server/reply.h"

namespace topofit::server {

struct OpsProbe {
  bool ok = false;
  std::string body;  // Said in either case: "ok\n", or what is missing.
};

struct OpsHandlers {
  std::function<OpsProbe()> live;
  std::function<OpsProbe()> ready;
  std::function<std::string()> metrics;
};

class OpsListener {
 public:
  explicit OpsListener(OpsHandlers handlers);
  ~OpsListener();  // Stop().

  // Binds `listen` (ADDR:PORT as --ops-listen takes it; port 0: an ephemeral one) and serves on a
  // thread of its own. Errors: a bad ADDR:PORT, the address in use.
  Status Start(const std::string& listen);
  void Stop();
  int port() const { return http_ ? http_->port() : 0; }

  // One request's answer (the listener's handler; a plain function for tests).
  static Reply Route(const HttpRequest& req, const OpsHandlers& handlers);

 private:
  OpsHandlers handlers_;
  std::unique_ptr<HttpListener> http_;
  std::thread thread_;
};

}  // namespace topofit::server
