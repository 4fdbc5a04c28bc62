#pragma once
// HttpRequest: one request as HttpListener hands it to a handler, and the URL decoding it needs.
//
// Contract: the views (method, body) point into the listener's buffers and live until the handler
// returns. Decoding never fails: a '%' not followed by two hex digits is kept as it is.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace topofit::server {

struct HttpRequest {
  std::string_view method;  // As sent: "GET", "POST"...
  std::string path;         // Percent-decoded, without the query.
  std::string query;        // The raw text after '?', "" when none.
  std::string_view body;
  // At least kBodyPadding readable zero bytes follow the body (a parser may read past the end).
  bool padded = false;
  static constexpr size_t kBodyPadding = 64;
  uint64_t content_length = 0;  // As declared (0 for chunked bodies).
  bool too_large = false;       // Declared or chunked body over max_body_bytes; body is empty.

  // The value of query parameter `key`, percent-decoded ('+' is a space); "" when absent.
  std::string QueryParam(std::string_view key) const;
};

// Percent-decodes `s` ("%2F" -> "/"); with plus_is_space, '+' becomes ' ' (query strings).
std::string PercentDecode(std::string_view s, bool plus_is_space);

}  // namespace topofit::server
