#pragma once
// Reply: what a handler answers, independent of the HTTP library, so handlers are testable as plain
// functions and the recorder sees exactly what went on the wire.

#include <string>

namespace topofit::server {

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

}  // namespace topofit::server
