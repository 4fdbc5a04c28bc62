#include "extender/apiclient/api_client.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "extender/apiclient/tls_material.h"

namespace topofit::apiclient {
namespace {

constexpr size_t kMaxPooled = 8;
constexpr size_t kMaxErrorBody = 64 * 1024;

void SetTimeout(httplib::ClientImpl& c, std::chrono::milliseconds connect,
                std::chrono::milliseconds io) {
  auto sec = [](std::chrono::milliseconds d) { return time_t(d.count() / 1000); };
  auto usec = [](std::chrono::milliseconds d) { return time_t(d.count() % 1000 * 1000); };
  c.set_connection_timeout(sec(connect), usec(connect));
  c.set_read_timeout(sec(io), usec(io));
  c.set_write_timeout(sec(io), usec(io));
}

std::string TransportError(const ClusterConfig& cfg, httplib::Error err) {
  return "API server " + cfg.server + ": " + httplib::to_string(err);
}

}  // namespace

void StreamHandle::Abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  if (active_) active_->stop();
}

bool StreamHandle::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

Result<std::unique_ptr<ApiClient>> ApiClient::Create(ClusterConfig cfg, ApiClientOptions options) {
  auto tls = TlsMaterial::Create(cfg);
  if (!tls.ok()) return Error{cfg.server + ": " + tls.error()};
  return std::unique_ptr<ApiClient>(new ApiClient(std::move(cfg), options, std::move(*tls)));
}

ApiClient::ApiClient(ClusterConfig cfg, ApiClientOptions options, std::unique_ptr<TlsMaterial> tls)
    : cfg_(std::move(cfg)),
      options_(options),
      tls_(std::move(tls)),
      tokens_(cfg_.token, cfg_.token_file, options.token_max_age),
      limiter_(options.qps, options.burst) {}

ApiClient::~ApiClient() = default;

Result<std::unique_ptr<httplib::SSLClient>> ApiClient::Acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  auto c = tls_->NewClient();
  if (!c.ok()) return Error{c.error()};
  (*c)->set_keep_alive(true);
  (*c)->set_tcp_nodelay(true);  // Headers and body go out as separate writes: no Nagle delay.
  (*c)->set_url_encode(false);  // Paths arrive already encoded (UrlEncode).
  SetTimeout(**c, options_.connect_timeout, options_.request_timeout);
  return c;
}

void ApiClient::Release(std::unique_ptr<httplib::SSLClient> client) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (idle_.size() < kMaxPooled) idle_.push_back(std::move(client));
}

Result<ApiResponse> ApiClient::DoOnce(std::string_view method, const std::string& path,
                                      const std::string& body, const std::string& content_type) {
  auto client = Acquire();
  if (!client.ok()) return Error{client.error()};
  httplib::Request req;
  req.method = std::string(method);
  req.path = cfg_.path_prefix + path;
  req.headers = {{"Accept", "application/json"}, {"User-Agent", "topofit"}};
  if (std::string token = tokens_.Token(); !token.empty())
    req.headers.emplace("Authorization", "Bearer " + token);
  if (!content_type.empty()) req.headers.emplace("Content-Type", content_type);
  req.body = body;
  auto res = (*client)->send(req);
  if (!res) return Error{TransportError(cfg_, res.error())};  // The client is dropped, not pooled.
  ApiResponse out{res->status, std::move(res->body)};
  Release(std::move(*client));
  return out;
}

Result<ApiResponse> ApiClient::Do(std::string_view method, const std::string& path,
                                  const std::string& body, const std::string& content_type) {
  limiter_.Wait();
  auto res = DoOnce(method, path, body, content_type);
  if (!res.ok()) {
    // A pooled keep-alive connection may have died with its server (API server restart): drop the
    // pool and retry once on a fresh connection. Safe for our one write: a repeated binding is
    // recognised by Bind's already-bound check (same node, uid and annotations).
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      idle_.clear();
    }
    res = DoOnce(method, path, body, content_type);
  }
  if (res.ok() && res->status == 401 && !cfg_.token_file.empty()) {
    tokens_.Invalidate();  // Rotated under us: read the file again and retry once.
    res = DoOnce(method, path, body, content_type);
  }
  return res;
}

Result<ApiResponse> ApiClient::Stream(const std::string& path, const DataFn& on_data,
                                      std::chrono::milliseconds read_timeout, StreamHandle* handle) {
  limiter_.Wait();
  auto made = tls_->NewClient();  // Own connection: a watch holds it for minutes.
  if (!made.ok()) return Error{made.error()};
  std::unique_ptr<httplib::SSLClient> client = std::move(*made);
  client->set_keep_alive(false);
  client->set_tcp_nodelay(true);
  client->set_url_encode(false);
  SetTimeout(*client, options_.connect_timeout, read_timeout);
  {
    std::lock_guard<std::mutex> lock(handle->mu_);
    if (handle->aborted_) return Error{"aborted"};
    handle->active_ = client.get();
  }
  httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", "topofit"}};
  if (std::string token = tokens_.Token(); !token.empty())
    headers.emplace("Authorization", "Bearer " + token);
  ApiResponse out;
  auto res = client->Get(
      cfg_.path_prefix + path, headers,
      [&](const httplib::Response& r) {
        out.status = r.status;
        return true;
      },
      [&](const char* data, size_t size) {
        if (out.status >= 200 && out.status < 300) return on_data(data, size);
        if (out.body.size() < kMaxErrorBody) out.body.append(data, size);
        return true;
      });
  {
    std::lock_guard<std::mutex> lock(handle->mu_);
    handle->active_ = nullptr;
    if (handle->aborted_) return Error{"aborted"};
  }
  if (!res) {
    if (out.status == 401 && !cfg_.token_file.empty()) tokens_.Invalidate();
    return Error{TransportError(cfg_, res.error())};
  }
  if (out.status == 401 && !cfg_.token_file.empty()) tokens_.Invalidate();
  out.status = res->status;
  return out;
}

std::string UrlEncode(std::string_view value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(char(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string ApiErrorMessage(const ApiResponse& response) {
  std::string message;
  auto j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    message = j["message"].get<std::string>();
  if (message.empty()) message = response.body.substr(0, 200);
  if (message.empty()) message = "no message";
  return std::to_string(response.status) + ": " + message;
}

Status MergePatch(ApiClient& api, const std::string& path, const std::string& patch, const std::string& what) {
  auto res = api.Do("PATCH", path, patch, "application/merge-patch+json");
  if (!res.ok()) return Error{what + ": " + res.error()};
  if (res->status / 100 != 2) return Error{what + ": " + ApiErrorMessage(*res)};
  return Status::Ok();
}

}  // namespace topofit::apiclient
