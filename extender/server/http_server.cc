#include "extender/server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>
#include <memory>

#include "extender/server/json_writer.h"

namespace topofit::server {
namespace {

std::string RegexEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Request buffers up to this size stay with their worker thread for the next call.
constexpr size_t kKeepBodyBytes = 16 << 20;

// Counts a running handler for Shutdown's drain.
class InFlight {
 public:
  explicit InFlight(std::atomic<int>& n) : n_(n) { n_.fetch_add(1); }
  ~InFlight() { n_.fetch_sub(1); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::atomic<int>& n_;
};

void Send(httplib::Response& res, Reply reply) {
  res.status = reply.status;
  // set_content copies; a full-node filter reply is megabytes, so large bodies are handed over
  // and written straight from our string.
  constexpr size_t kCopyLimit = 64 * 1024;
  if (reply.body.size() <= kCopyLimit) {
    res.set_content(reply.body, reply.content_type);
    return;
  }
  auto body = std::make_shared<std::string>(std::move(reply.body));
  res.set_content_provider(body->size(), reply.content_type,
                           [body](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(body->data() + offset, length);
                           });
}

}  // namespace

ExtenderServer::ExtenderServer(ServerOptions options, ExtenderVerbs* verbs, const QueryApi* query,
                               const Metrics* metrics, const model::ClusterModel* model)
    : options_(std::move(options)), verbs_(verbs), query_(query), metrics_(metrics), model_(model),
      http_(std::make_unique<httplib::Server>()) {
  while (options_.url_prefix.size() > 1 && options_.url_prefix.back() == '/') options_.url_prefix.pop_back();
  if (!options_.url_prefix.empty() && options_.url_prefix.front() != '/') options_.url_prefix = "/" + options_.url_prefix;
  if (options_.url_prefix == "/") options_.url_prefix.clear();
  size_t threads = options_.threads > 0 ? size_t(options_.threads)
                                        : std::max<size_t>(32, 4 * std::max(1u, std::thread::hardware_concurrency()));
  auto transport = [this](httplib::Server& s, size_t threads) {
    s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    s.set_tcp_nodelay(true);
    s.set_keep_alive_max_count(std::numeric_limits<size_t>::max());
    s.set_keep_alive_timeout(options_.keep_alive_seconds);
    s.set_payload_max_length(options_.max_body_bytes);
    s.set_read_timeout(30, 0);
    s.set_write_timeout(30, 0);
  };
  transport(*http_, threads);
  if (options_.ops_port >= 0) {
    ops_ = std::make_unique<httplib::Server>();
    transport(*ops_, 8);  // Probes, a Prometheus scraper and the odd person with curl.
  }
  Routes();
}

ExtenderServer::~ExtenderServer() { Stop(); }

void ExtenderServer::Routes() {
  VerbRoutes(*http_);
  OpsRoutes(ops_ ? *ops_ : *http_);
  ErrorHandlers(*http_);
  if (ops_) ErrorHandlers(*ops_);
}

void ExtenderServer::VerbRoutes(httplib::Server& s) {
  const std::string prefix = RegexEscape(options_.url_prefix);
  struct Route {
    const char* name;
    Verb verb;
  };
  for (Route r : {Route{"filter", Verb::kFilter}, Route{"prioritize", Verb::kPrioritize},
                  Route{"bind", Verb::kBind}, Route{"preempt", Verb::kPreempt}}) {
    s.Post(prefix + "/" + r.name, [this, verb = r.verb](const httplib::Request& req, httplib::Response& res,
                                                        const httplib::ContentReader& read) {
      InFlight counted(in_flight_);
      // httplib would grow req.body 4 KB at a time (a dozen copies and fresh pages for a 3 MB
      // full-node body); a per-thread buffer sized from Content-Length is filled once and reused.
      thread_local std::string body;
      body.clear();
      size_t length = 0;
      const std::string declared = req.get_header_value("Content-Length");
      std::from_chars(declared.data(), declared.data() + declared.size(), length);
      body.reserve(std::min(length, options_.max_body_bytes));
      bool complete = read([](const char* data, size_t n) {
        body.append(data, n);
        return true;
      });
      if (!complete) {
        // httplib set 413 (over --max-body-bytes; it drained the body) or 400; the error handler
        // below words the reply for this verb.
        if (res.status < 400) res.status = 400;
        return;
      }
      Send(res, verbs_->Handle(verb, body));
      if (body.capacity() > kKeepBodyBytes) std::string().swap(body);
    });
  }
}

void ExtenderServer::OpsRoutes(httplib::Server& s) {
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (ready_.load()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content(JsonError("the cluster model is not loaded yet"), "application/json");
    }
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_->Render(*model_), "text/plain; version=0.0.4");
  });
  s.Get("/api/v1/nodes", [this](const httplib::Request&, httplib::Response& res) { Send(res, query_->Nodes()); });
  s.Get(R"(/api/v1/nodes/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, query_->Node(req.matches[1].str()));
  });
  s.Get(R"(/api/v1/pods/([^/]+)/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, query_->Pod(req.matches[1].str(), req.matches[2].str()));
  });
  s.Post("/api/v1/explain", [this](const httplib::Request& req, httplib::Response& res) {
    InFlight counted(in_flight_);
    Send(res, query_->Explain(req.body, req.get_param_value("nodes")));
  });

}

void ExtenderServer::ErrorHandlers(httplib::Server& s) {
  // Replies httplib makes itself (413 over the body limit, 404, 400 on a broken request line) get
  // the shape of the endpoint they hit. Our own 4xx replies already have a body and pass through.
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message;
    if (res.status == 413) {
      message = fmt::format("request body of {} bytes exceeds the limit of {} bytes (--max-body-bytes)",
                            req.get_header_value("Content-Length"), options_.max_body_bytes);
    } else if (res.status == 404) {
      message = fmt::format("no endpoint {} {}", req.method, req.path);
    } else {
      message = fmt::format("HTTP {}", res.status);
    }
    const std::string& p = options_.url_prefix;
    if (req.method == "POST" && req.path.size() > p.size() && req.path.compare(0, p.size(), p) == 0) {
      std::string_view verb = std::string_view(req.path).substr(p.size());
      if (res.status == 413 && (verb == "/filter" || verb == "/bind")) {
        Reply r = ExtenderVerbs::Refused(verb == "/filter" ? Verb::kFilter : Verb::kBind, message);
        res.status = r.status;
        res.set_content(r.body, "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    res.set_content(JsonError(message), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = fmt::format("internal error: {}", e.what());
    } catch (...) {
    }
    res.status = 500;
    res.set_content(JsonError(what), "application/json");
  });
}

Status ExtenderServer::Bind() {
  if (options_.port == 0) {
    int port = http_->bind_to_any_port(options_.host);
    if (port <= 0) return Error{fmt::format("cannot listen on {}:0", options_.host)};
    port_ = port;
  } else {
    if (!http_->bind_to_port(options_.host, options_.port))
      return Error{fmt::format("cannot listen on {}:{} (address in use or not local?)", options_.host, options_.port)};
    port_ = options_.port;
  }
  if (ops_) {
    const std::string& host = options_.ops_host;
    ops_port_ = options_.ops_port == 0 ? ops_->bind_to_any_port(host) : ops_->bind_to_port(host, options_.ops_port) ? options_.ops_port : -1;
    if (ops_port_ <= 0) return Error{fmt::format("cannot listen on {}:{} (--ops-listen)", host, options_.ops_port)};
  }
  return Status::Ok();
}

void ExtenderServer::Run() {
  if (ops_ && !ops_thread_.joinable()) ops_thread_ = std::thread([this] { ops_->listen_after_bind(); });
  http_->listen_after_bind();
}

Status ExtenderServer::Start() {
  if (port_ == 0) {
    Status bound = Bind();
    if (!bound.ok()) return bound;
  }
  thread_ = std::thread([this] { Run(); });
  // listen_after_bind() sets is_running() before accepting; until then a client could race Stop().
  for (int i = 0; i < 2000 && !(http_->is_running() && (!ops_ || ops_->is_running())); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

bool ExtenderServer::Shutdown(std::chrono::milliseconds drain) {
  SetReady(false);
  if (http_) http_->stop();
  if (ops_) ops_->stop();
  auto deadline = std::chrono::steady_clock::now() + drain;
  while (in_flight_.load() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void ExtenderServer::Stop() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
  if (ops_) {
    // Run() may not have reached listen yet; stop() only acts on a running server.
    for (int i = 0; i < 2000 && ops_thread_.joinable() && !ops_->is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ops_->stop();
  }
  if (ops_thread_.joinable()) ops_thread_.join();
}

}  // namespace topofit::server
