#pragma once
// The bytes HttpListener writes besides the handlers' bodies: status lines and reply heads, the
// interim 100 Continue, and the plain refusal of plain HTTP on a TLS port.
//
// Contract: pure functions of their arguments; every head ends with the blank line. A reply head
// carries Content-Type, Content-Length, the reply's extra headers and, when the connection ends
// after it, "Connection: close".

#include <string>
#include <string_view>

#include "extender/server/reply.h"

namespace topofit::server {

// "OK", "Not Found"...: the reason phrase for `status`.
const char* ReasonPhrase(int status);

// "HTTP/1.1 <status> <reason>\r\n" and the headers of `reply` (its body is sent after).
std::string ReplyHead(const Reply& reply, bool keep_alive);

inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// What Go's servers answer to plain HTTP on a TLS port.
inline constexpr std::string_view kPlainHttpOnTls =
    "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 48\r\n"
    "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

}  // namespace topofit::server
