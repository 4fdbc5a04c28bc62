#pragma once
// Reply: what a handler answers, independent of the HTTP library, so handlers are testable as plain
// functions and the recorder sees exactly what went on the wire.

#include <string>
#include <string_view>

#include "base/json_writer.h"

namespace topofit::server {

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // Further response headers, each "Name: value\r\n" (e.g. Cache-Control on the web view's files).
  std::string extra_headers = {};
  // The call failed: a 4xx, or a 200 whose Error is set (filter and bind). Counted in metrics.
  bool error = false;
  // The request body was not JSON at all (the recorder then stores it as text).
  bool request_not_json = false;
};

// A reply with body {"error": message} and `status`, counted as an error.
inline Reply JsonErrorReply(int status, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = JsonError(message);
  r.error = true;
  return r;
}

}  // namespace topofit::server
