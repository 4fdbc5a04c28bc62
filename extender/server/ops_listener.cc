#include "extender/server/ops_listener.h"

#include <fmt/format.h>

#include "extender/server/http_server.h"
#include "extender/server/serve_config.h"

namespace topofit::server {
namespace {

Reply Text(int status, std::string body, std::string content_type = "text/plain") {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  r.error = status != 200;
  return r;
}

Reply ProbeReply(const OpsProbe& p) { return Text(p.ok ? 200 : 503, p.body); }

}  // namespace

OpsListener::OpsListener(OpsHandlers handlers) : handlers_(std::move(handlers)) {}

OpsListener::~OpsListener() { Stop(); }

Reply OpsListener::Route(const HttpRequest& req, const OpsHandlers& h) {
  const bool known = req.path == "/healthz" || req.path == "/readyz" || req.path == "/metrics";
  if (known && req.method != "GET") return JsonErrorReply(405, fmt::format("{} takes GET only", req.path));
  if (req.path == "/healthz") return ProbeReply(h.live());
  if (req.path == "/readyz") return ProbeReply(h.ready());
  if (req.path == "/metrics") return Text(200, h.metrics(), "text/plain; version=0.0.4");
  return JsonErrorReply(404, fmt::format("no endpoint {} {}", req.method, req.path));
}

Status OpsListener::Start(const std::string& listen) {
  ServerOptions parsed;
  Status s = ParseOpsListen(listen, parsed);
  if (!s.ok()) return s;
  ListenerOptions o;
  o.host = parsed.ops_host;
  o.port = parsed.ops_port;
  o.threads = 4;
  o.thread_name = "ops";
  o.max_body_bytes = 64 << 10;
  http_ = std::make_unique<HttpListener>(o, [this](const HttpRequest& req) { return Route(req, handlers_); });
  s = http_->Bind();
  if (!s.ok()) return Error{s.error() + " (--ops-listen)"};
  thread_ = std::thread([this] { http_->Run(); });
  return Status::Ok();
}

void OpsListener::Stop() {
  if (http_) http_->Stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace topofit::server
