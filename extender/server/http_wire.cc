#include "extender/server/http_wire.h"

#include <fmt/format.h>

namespace topofit::server {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 300 ? "OK" : status < 500 ? "Client Error" : "Server Error";
  }
}

std::string ReplyHead(const Reply& r, bool keep_alive) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}{}\r\n", r.status,
                     ReasonPhrase(r.status), r.content_type, r.body.size(), r.extra_headers,
                     keep_alive ? "" : "Connection: close\r\n");
}

}  // namespace topofit::server
