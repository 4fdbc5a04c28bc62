#pragma once
// RequestReader: assembles one HTTP/1.1 request at a time from the bytes of one connection, as they
// come - so HttpListener's reader thread can hold many partial requests without a thread for each
// and hand only complete ones to its workers. Boost.Beast's parser reads the head and chunked
// bodies; a Content-Length body is received straight into one buffer of its size (followed by
// HttpRequest::kBodyPadding zero bytes), which the connection keeps for its next request up to
// kKeepBodyBytes.
//
// Contract: feed bytes with Received() (or, while a Content-Length body arrives, receive into
// BodySpace() and call ReceivedInBody()); each call answers kNeedMore, kComplete or kFailed. Then:
//   kComplete  request() is the request; a body over max_body_bytes is not read (too_large set,
//              keep_alive() false: the connection closes after the reply);
//   kFailed    failure() is the reply to send before closing: 400 for a malformed head or body (its
//              reason from Beast), 431 for a head over kHeaderLimit, 503 when the listener's
//              ByteBudget cannot hold the body.
// Next() readies the next request and parses what was pipelined after this one (bytes are never
// lost). Every byte of body memory is taken from the ByteBudget first and given back when freed.
// Not thread-safe: one connection, one owner at a time.

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "extender/server/http_request.h"
#include "extender/server/reply.h"

namespace topofit::server {

// The bytes one listener holds for request bodies, against a limit.
class ByteBudget {
 public:
  explicit ByteBudget(size_t limit) : limit_(limit) {}
  bool Take(size_t n) {
    if (n > limit_ - used_) return false;
    used_ += n;
    return true;
  }
  void Give(size_t n) { used_ -= n; }
  size_t used() const { return used_; }
  size_t limit() const { return limit_; }

 private:
  size_t limit_;
  size_t used_ = 0;
};

class RequestReader {
 public:
  enum class State { kNeedMore, kComplete, kFailed };
  static constexpr size_t kHeaderLimit = 16 << 10;
  static constexpr size_t kKeepBodyBytes = 16 << 20;

  RequestReader(size_t max_body_bytes, ByteBudget* budget);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // The room left for a Content-Length body; empty unless one is arriving.
  std::span<char> BodySpace();
  State ReceivedInBody(size_t n);
  State Received(std::string_view bytes);

  // Some byte of the current request has arrived (or was pipelined after the last one).
  bool started() const { return phase_ != Phase::kHead || buffer_.size() > 0; }
  // The head asked for "100 Continue" and nobody has sent it yet; cleared by the call.
  bool TakeContinue();
  bool keep_alive() const;
  const HttpRequest& request() const { return request_; }
  const Reply& failure() const { return failure_; }
  State Next();

 private:
  enum class Phase { kHead, kChunked, kFixedBody, kDone, kFailed };
  State Parse();
  State ParseHead();
  State ParseChunked();
  State StartBody();
  State Complete();
  State Fail(int status, std::string message);
  State Busy();  // 503: the ByteBudget cannot hold the body.
  void ReleaseBody(bool keep);

  const size_t max_body_bytes_;
  ByteBudget* budget_;
  Phase phase_ = Phase::kHead;
  boost::beast::flat_buffer buffer_;  // Received, not yet parsed.
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::unique_ptr<char[]> body_;       // A Content-Length body and its padding.
  size_t body_capacity_ = 0;           // Taken from the budget.
  size_t body_length_ = 0, body_have_ = 0;
  size_t chunked_taken_ = 0;           // Taken from the budget for a chunked body.
  bool continue_ = false;
  HttpRequest request_;
  Reply failure_;
};

}  // namespace topofit::server
