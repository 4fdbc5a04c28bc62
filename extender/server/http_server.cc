#include "extender/server/http_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "base/json_writer.h"
#include "extender/server/ui_assets.h"

namespace topofit::server {
namespace {

Reply Text(std::string body) {
  Reply r;
  r.body = std::move(body);
  r.content_type = "text/plain";
  return r;
}

// "/api/v1/nodes/NAME" -> NAME when `path` is `prefix` plus exactly `segments` non-empty segments.
bool Segments(std::string_view path, std::string_view prefix, size_t segments, std::string_view out[]) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  path.remove_prefix(prefix.size());
  for (size_t i = 0; i < segments; ++i) {
    size_t slash = path.find('/');
    out[i] = path.substr(0, slash);
    if (out[i].empty() || (i + 1 == segments) != (slash == std::string_view::npos)) return false;
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
  }
  return true;
}

constexpr std::string_view kNotReady = "the cluster model is not loaded yet";

bool IsQuery(std::string_view path) { return path == "/api/v1" || path.starts_with("/api/v1/"); }

// Counts one running call in `running` while alive; with a cap, not at all when `running` is at it.
class Running {
 public:
  Running(std::atomic<int>& running, int cap = std::numeric_limits<int>::max()) : running_(running) {
    taken_ = running_.fetch_add(1) < cap;
    if (!taken_) running_.fetch_sub(1);
  }
  ~Running() {
    if (taken_) running_.fetch_sub(1);
  }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  explicit operator bool() const { return taken_; }

 private:
  std::atomic<int>& running_;
  bool taken_;
};

}  // namespace

HttpServer::HttpServer(ServerOptions options, ExtenderVerbs* verbs, const QueryApi* query,
                               const Metrics* metrics, const cluster::ClusterModel* model,
                               std::shared_ptr<TlsCredentials> tls)
    : options_(std::move(options)),
      verbs_(verbs),
      query_(query),
      metrics_(metrics),
      model_(model),
      query_runner_(std::max(1, options_.max_concurrent_queries), options_.query_cpu_cores) {
  while (options_.url_prefix.size() > 1 && options_.url_prefix.back() == '/') options_.url_prefix.pop_back();
  if (!options_.url_prefix.empty() && options_.url_prefix.front() != '/') options_.url_prefix = "/" + options_.url_prefix;
  if (options_.url_prefix == "/") options_.url_prefix.clear();
  ListenerOptions transport;
  static_cast<ListenerLimits&>(transport) = static_cast<const ListenerLimits&>(options_);
  transport.host = options_.host;
  transport.port = options_.port;
  transport.threads = options_.threads > 0 ? options_.threads
                                           : static_cast<int>(std::max(32u, 4 * std::max(1u, std::thread::hardware_concurrency())));
  transport.max_body_bytes = options_.max_body_bytes;
  const bool split = options_.ops_port >= 0;
  transport.tls = std::move(tls);
  transport.thread_name = split ? "verbs" : "http";
  http_ = std::make_unique<HttpListener>(transport, [this, split](const HttpRequest& req) { return Route(req, true, !split); });
  if (split) {
    transport.host = options_.ops_host;
    transport.port = options_.ops_port;
    transport.threads = 8;  // Probes, a Prometheus scraper and the odd person with curl.
    transport.tls = nullptr;
    transport.thread_name = "ops";
    ops_ = std::make_unique<HttpListener>(transport, [this](const HttpRequest& req) { return Route(req, false, true); });
  }
}

HttpServer::~HttpServer() { Stop(); }

std::string HttpServer::TooLarge(const HttpRequest& req) const {
  if (req.content_length == 0)  // Chunked: refused once past the limit, its size unknown.
    return fmt::format("request body exceeds the limit of {} bytes (--max-body-bytes)", options_.max_body_bytes);
  return fmt::format("request body of {} bytes exceeds the limit of {} bytes (--max-body-bytes)",
                     req.content_length, options_.max_body_bytes);
}

Reply HttpServer::Route(const HttpRequest& req, bool verbs, bool ops) {
  const std::string& p = options_.url_prefix;
  if (verbs && req.method == "POST" && req.path.size() > p.size() + 1 && req.path.compare(0, p.size(), p) == 0 &&
      req.path[p.size()] == '/') {
    std::string_view name = std::string_view(req.path).substr(p.size() + 1);
    for (Verb verb : {Verb::kFilter, Verb::kPrioritize, Verb::kBind, Verb::kPreempt, Verb::kPrioritizePodsWithoutGpus})
      if (name == ToString(verb)) return HandleVerb(req, verb);
  }
  // Any other endpoint refuses a body over the limit before looking at it.
  if (req.too_large) return JsonErrorReply(413, TooLarge(req));
  if (ops) {
    Reply r = IsQuery(req.path) ? Query(req) : Ops(req);
    if (r.status != 404 || !r.body.empty()) return r;
  }
  return JsonErrorReply(404, fmt::format("no endpoint {} {}", req.method, req.path));
}

Reply HttpServer::Query(const HttpRequest& req) {
  const int cap = std::max(1, options_.max_concurrent_queries);
  Running slot(queries_running_, cap);
  if (!slot) {
    Reply r = JsonErrorReply(503, fmt::format("{} queries are running, the most at once; retry", cap));
    r.extra_headers = "Retry-After: 1\r\n";
    return r;
  }
  if (req.body.size() > options_.max_query_body_bytes)
    return JsonErrorReply(413, fmt::format("request body of {} bytes exceeds the limit of {} bytes for /api/v1",
                                           req.body.size(), options_.max_query_body_bytes));
  if (req.method == "DELETE") return Ops(req);  // Snapshot mode's pod deletion: a quick write of the model.
  if (!query_runner_.Admit()) {
    Reply r = JsonErrorReply(503, fmt::format("queries have used their CPU budget ({} cores on average); retry", kQueryCpuCores));
    r.extra_headers = "Retry-After: 1\r\n";
    return r;
  }
  return query_runner_.Run([this, &req] { return Ops(req); });
}

Reply HttpServer::HandleVerb(const HttpRequest& req, Verb verb) {
  static_assert(HttpRequest::kBodyPadding >= protocol::kJsonPadding);
  Running running(verbs_running_);
  if (!ready_.load()) {
    // Until the first lists are in, the model lacks nodes (filter would call them unknown, and the
    // scheduler parks the pod as unschedulable) or the pods holding GPUs (bind would hand out their
    // GPUs again). A refusal is an error to kube-scheduler: it retries the pod after its back-off.
    if (verb == Verb::kFilter || verb == Verb::kBind) return ExtenderVerbs::Refused(verb, kNotReady);
    return JsonErrorReply(503, kNotReady);
  }
  if (!req.too_large) return verbs_->Handle(verb, req.body, req.padded);
  std::string message = TooLarge(req);
  if (verb == Verb::kFilter || verb == Verb::kBind) return ExtenderVerbs::Refused(verb, message);
  return JsonErrorReply(413, message);
}

// An empty 404 when no ops endpoint matches (Route words it). Bodies over the limit never get here.
Reply HttpServer::Ops(const HttpRequest& req) {
  std::string_view path = req.path;
  std::string_view parts[2];
  if (req.method == "GET") {
    if (path == "/healthz") return Text("ok\n");
    if (path == "/readyz") return ready_.load() ? Text("ok\n") : JsonErrorReply(503, kNotReady);
    if (path == "/metrics") {
      const placement::ProductShortfall shortfall = query_->Shortfall();
      Reply r = Text(metrics_->Render(*model_, &shortfall));
      r.content_type = "text/plain; version=0.0.4";
      return r;
    }
    if (path == "/api/v1/nodes") return query_->Nodes();
    if (path == "/api/v1/ui/nodes") return query_->UiNodes(req.QueryParam("domain"), req.QueryParam("limit"));
    if (path == "/api/v1/overview") return query_->Overview(req.QueryParam("layout"));
    if (path == "/api/v1/workload") return query_->Workload();
    if (path == "/api/v1/groups") return query_->Groups();
    if (const UiAssetFile* file = UiAsset(path)) {
      Reply r;
      r.body = std::string(file->body);
      r.content_type = std::string(file->content_type);
      r.extra_headers = "Cache-Control: no-cache\r\n";
      return r;
    }
    if (Segments(path, "/api/v1/nodes/", 1, parts)) return query_->Node(parts[0]);
    if (Segments(path, "/api/v1/pods/", 2, parts)) return query_->Pod(parts[0], parts[1]);
  } else if (req.method == "POST" && path == "/api/v1/explain") {
    return query_->Explain(req.body, req.QueryParam("nodes"));
  } else if (req.method == "DELETE" && Segments(path, "/api/v1/pods/", 2, parts)) {
    if (!pod_deleter_) {
      return JsonErrorReply(405, "pods are deleted through the API server: the watch tells the model (live mode)");
    }
    return pod_deleter_(parts[0], parts[1]);
  }
  Reply none;
  none.status = 404;
  return none;
}

Status HttpServer::Bind() {
  if (Status s = http_->Bind(); !s.ok()) return s;
  if (ops_) {
    if (Status s = ops_->Bind(); !s.ok()) return Error{s.error() + " (--ops-listen)"};
  }
  bound_ = true;
  return Status::Ok();
}

void HttpServer::Run() {
  if (ops_ && !ops_thread_.joinable()) ops_thread_ = std::thread([this] { ops_->Run(); });
  http_->Run();
}

Status HttpServer::Start() {
  if (!bound_) {
    Status bound = Bind();
    if (!bound.ok()) return bound;
  }
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

int HttpServer::in_flight() const { return http_->in_flight() + (ops_ ? ops_->in_flight() : 0); }

bool HttpServer::Shutdown(std::chrono::milliseconds drain) {
  SetReady(false);
  http_->StopAccepting();
  if (ops_) ops_->StopAccepting();
  auto deadline = std::chrono::steady_clock::now() + drain;
  while (verbs_running_.load() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void HttpServer::Stop() {
  http_->Stop();
  if (ops_) ops_->Stop();
  if (thread_.joinable()) thread_.join();
  if (ops_thread_.joinable()) ops_thread_.join();
}

}  // namespace topofit::server
