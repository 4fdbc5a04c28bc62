#pragma once
// ApiClient: HTTPS requests to the Kubernetes API server with timeouts, bearer-token rotation and a
// small pool of kept-alive connections.
//
// Each Do() and Stream() first waits for a token of the client-side rate limit (options.qps, burst).
// Do() is one bounded request (connect + each read/write bounded by the options; a 401 re-reads the
// token file and retries once). Stream() is a long GET whose body is handed over chunk by chunk
// (watches); it is bounded by a read timeout between chunks and can be aborted from another thread
// through a StreamHandle. Both return the HTTP status and, for non-2xx (or for Do always), the body;
// transport failures are Errors. Thread-safe: any number of threads may call Do/Stream at once.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/apiclient/kubeconfig.h"
#include "extender/apiclient/rate_limiter.h"
#include "extender/apiclient/token_source.h"

namespace httplib {
class SSLClient;
class ClientImpl;
}  // namespace httplib

namespace topofit::apiclient {

class TlsMaterial;

struct ApiClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};  // Per read/write for Do().
  std::chrono::seconds token_max_age{60};
  // Client-side limit on requests (rate_limiter.h; --kube-api-qps, --kube-api-burst): each Do() and
  // Stream() takes a token. Well above what binding needs (one request per pod, at most a few hundred
  // pods a second even without an extender), so it only stops a runaway loop; qps 0: no limit.
  double qps = 500;
  int burst = 1000;
};

struct ApiResponse {
  int status = 0;
  std::string body;
};

// Lets one thread abort another thread's Stream(). Abort() is sticky: a later Stream() with the
// same handle returns at once.
class StreamHandle {
 public:
  void Abort();
  bool aborted() const;

 private:
  friend class ApiClient;
  mutable std::mutex mu_;
  httplib::ClientImpl* active_ = nullptr;
  bool aborted_ = false;
};

class ApiClient {
 public:
  static Result<std::unique_ptr<ApiClient>> Create(ClusterConfig cfg, ApiClientOptions options = {});
  ~ApiClient();

  // method: GET, POST, PUT, PATCH, DELETE. `path` starts with '/' and includes the query string.
  Result<ApiResponse> Do(std::string_view method, const std::string& path, const std::string& body = {},
                         const std::string& content_type = {});

  // Streams a GET. on_data returns false to stop early (then the result is an Error "canceled").
  // A 2xx body goes only to on_data; another status's body is returned in the response.
  using DataFn = std::function<bool(const char* data, size_t size)>;
  Result<ApiResponse> Stream(const std::string& path, const DataFn& on_data,
                             std::chrono::milliseconds read_timeout, StreamHandle* handle);

  const ClusterConfig& config() const { return cfg_; }
  TokenSource& tokens() { return tokens_; }

 private:
  ApiClient(ClusterConfig cfg, ApiClientOptions options, std::unique_ptr<TlsMaterial> tls);
  Result<std::unique_ptr<httplib::SSLClient>> Acquire();
  void Release(std::unique_ptr<httplib::SSLClient> client);
  Result<ApiResponse> DoOnce(std::string_view method, const std::string& path, const std::string& body,
                             const std::string& content_type);

  const ClusterConfig cfg_;
  const ApiClientOptions options_;
  std::unique_ptr<TlsMaterial> tls_;
  TokenSource tokens_;
  TokenBucket limiter_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<httplib::SSLClient>> idle_;
};

// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view value);

// The `message` of a Kubernetes Status body, else a short excerpt of the body, prefixed by the
// HTTP status: "409: pods \"p\" is already assigned to node \"n\"".
std::string ApiErrorMessage(const ApiResponse& response);

// One JSON merge patch (`patch`: its JSON text) of the object at `path`; an Error "<what>: <reason>"
// unless the API server answers 2xx, e.g. "annotate node n1: 404: nodes \"n1\" not found".
Status MergePatch(ApiClient& api, const std::string& path, const std::string& patch, const std::string& what);

}  // namespace topofit::apiclient
