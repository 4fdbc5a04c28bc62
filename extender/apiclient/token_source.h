#pragma once
// TokenSource: the bearer token to send, re-read from its file so that rotated tokens are used.
//
// Projected service-account tokens are rotated by the kubelet (and the old one expires), so the
// file is re-read when the cached copy is older than `max_age` and immediately after Invalidate()
// (called on a 401). A static token never changes. Thread-safe; Token() never blocks on more than a
// small file read.

#include <chrono>
#include <mutex>
#include <string>

namespace topofit::apiclient {

class TokenSource {
 public:
  using Clock = std::chrono::steady_clock;
  TokenSource(std::string static_token, std::string token_file,
              Clock::duration max_age = std::chrono::minutes(1));

  // The current token ("" for none). On a read error keeps serving the last good token.
  std::string Token();
  // Forces a re-read on the next Token() call.
  void Invalidate();

 private:
  const std::string static_token_;
  const std::string token_file_;
  const Clock::duration max_age_;
  std::mutex mu_;
  std::string cached_;
  Clock::time_point read_at_{};
  bool stale_ = true;
};

}  // namespace topofit::apiclient
