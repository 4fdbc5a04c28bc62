#include "extender/server/request_reader.h"

#include <fmt/format.h>

#include <boost/beast/core/string.hpp>
#include <algorithm>
#include <cstring>
#include <limits>

namespace topofit::server {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

// What a head (or a chunk header) may leave unparsed before it is refused: the head limit and one
// more read's worth.
constexpr size_t kMaxUnparsed = RequestReader::kHeaderLimit + (64 << 10);

}  // namespace

RequestReader::RequestReader(size_t max_body_bytes, ByteBudget* budget)
    : max_body_bytes_(max_body_bytes), budget_(budget) {
  Next();
}

RequestReader::~RequestReader() {
  ReleaseBody(false);
}

void RequestReader::ReleaseBody(bool keep) {
  budget_->Give(chunked_taken_);
  chunked_taken_ = 0;
  if (keep && body_capacity_ <= kKeepBodyBytes) return;
  body_.reset();
  budget_->Give(body_capacity_);
  body_capacity_ = 0;
}

RequestReader::State RequestReader::Next() {
  ReleaseBody(true);
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  request_ = HttpRequest();
  failure_ = Reply();
  body_length_ = body_have_ = 0;
  continue_ = false;
  phase_ = Phase::kHead;
  return buffer_.size() > 0 ? Parse() : State::kNeedMore;
}

std::span<char> RequestReader::BodySpace() {
  if (phase_ != Phase::kFixedBody) return {};
  return {body_.get() + body_have_, body_length_ - body_have_};
}

RequestReader::State RequestReader::ReceivedInBody(size_t n) {
  body_have_ += n;
  return body_have_ == body_length_ ? Complete() : State::kNeedMore;
}

RequestReader::State RequestReader::Received(std::string_view bytes) {
  if (phase_ == Phase::kFailed) return State::kFailed;
  if (phase_ == Phase::kFixedBody) {  // Bytes read elsewhere while a body arrives: copy them in.
    size_t n = std::min(bytes.size(), body_length_ - body_have_);
    std::memcpy(body_.get() + body_have_, bytes.data(), n);
    bytes.remove_prefix(n);
    State s = ReceivedInBody(n);
    if (s != State::kComplete || bytes.empty()) return s;
    // Bytes of the next request: kept for Next().
  }
  if (buffer_.size() + bytes.size() > kMaxUnparsed && phase_ != Phase::kDone)
    return phase_ == Phase::kHead ? Fail(431, "malformed HTTP request: header fields too large")
                                  : Fail(400, "malformed HTTP body: a chunk header too long");
  auto room = buffer_.prepare(bytes.size());
  std::memcpy(room.data(), bytes.data(), bytes.size());
  buffer_.commit(bytes.size());
  return phase_ == Phase::kDone ? State::kComplete : Parse();
}

bool RequestReader::TakeContinue() {
  bool c = continue_;
  continue_ = false;
  return c;
}

bool RequestReader::keep_alive() const {
  return phase_ == Phase::kDone && parser_->get().keep_alive() && !request_.too_large;
}

RequestReader::State RequestReader::Parse() {
  switch (phase_) {
    case Phase::kHead: return ParseHead();
    case Phase::kChunked: return ParseChunked();
    case Phase::kFixedBody: return State::kNeedMore;
    case Phase::kDone: return State::kComplete;
    case Phase::kFailed: return State::kFailed;
  }
  return State::kFailed;
}

RequestReader::State RequestReader::ParseHead() {
  beast::error_code ec;
  size_t used = parser_->put(buffer_.data(), ec);
  buffer_.consume(used);
  if (ec == http::error::need_more) return State::kNeedMore;
  if (ec) return Fail(ec == http::error::header_limit ? 431 : 400, fmt::format("malformed HTTP request: {}", ec.message()));
  if (!parser_->is_header_done()) return State::kNeedMore;
  auto& msg = parser_->get();
  request_.method = View(msg.method_string());
  std::string_view target = View(msg.target());
  size_t q = target.find('?');
  request_.path = PercentDecode(target.substr(0, q), false);
  if (q != std::string_view::npos) request_.query = std::string(target.substr(q + 1));
  if (auto length = parser_->content_length()) request_.content_length = *length;
  request_.too_large = request_.content_length > max_body_bytes_;
  if (request_.too_large) return Complete();  // Not read.
  continue_ = msg.version() >= 11 && beast::iequals(msg[http::field::expect], "100-continue");
  if (parser_->chunked()) {
    parser_->body_limit(max_body_bytes_);
    parser_->eager(true);
    phase_ = Phase::kChunked;
    return ParseChunked();
  }
  return request_.content_length > 0 ? StartBody() : Complete();
}

RequestReader::State RequestReader::StartBody() {
  const size_t length = static_cast<size_t>(request_.content_length);
  const size_t want = length + HttpRequest::kBodyPadding;
  if (want > body_capacity_) {
    // Without zero-filling: a full-node body is megabytes.
    budget_->Give(body_capacity_);
    body_.reset();
    body_capacity_ = 0;
    if (!budget_->Take(want))
      return Busy();
    body_ = std::make_unique_for_overwrite<char[]>(want);
    body_capacity_ = want;
  }
  std::memset(body_.get() + length, 0, HttpRequest::kBodyPadding);
  body_length_ = length;
  body_have_ = std::min(length, buffer_.size());
  std::memcpy(body_.get(), buffer_.data().data(), body_have_);
  buffer_.consume(body_have_);
  phase_ = Phase::kFixedBody;
  return body_have_ == body_length_ ? Complete() : State::kNeedMore;
}

RequestReader::State RequestReader::ParseChunked() {
  for (;;) {
    beast::error_code ec;
    size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    const size_t held = parser_->get().body().capacity();
    if (held > chunked_taken_) {
      if (!budget_->Take(held - chunked_taken_))
        return Busy();
      chunked_taken_ = held;
    }
    if (ec == http::error::body_limit) {
      request_.too_large = true;
      return Complete();
    }
    if (ec == http::error::need_more) return State::kNeedMore;
    if (ec) return Fail(400, fmt::format("malformed HTTP body: {}", ec.message()));
    if (parser_->is_done()) {
      request_.body = parser_->get().body();
      return Complete();
    }
    if (used == 0) return State::kNeedMore;
  }
}

RequestReader::State RequestReader::Complete() {
  if (phase_ == Phase::kFixedBody) {
    request_.body = std::string_view(body_.get(), body_length_);
    request_.padded = true;
  }
  phase_ = Phase::kDone;
  return State::kComplete;
}

RequestReader::State RequestReader::Fail(int status, std::string message) {
  phase_ = Phase::kFailed;
  failure_ = JsonErrorReply(status, message);
  return State::kFailed;
}

RequestReader::State RequestReader::Busy() {
  Fail(503, fmt::format("the server holds its limit of {} bytes of request bodies; retry", budget_->limit()));
  failure_.extra_headers = "Retry-After: 1\r\n";
  return State::kFailed;
}

}  // namespace topofit::server
