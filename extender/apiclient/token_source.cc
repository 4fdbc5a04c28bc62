#include "extender/apiclient/token_source.h"

#include "base/files.h"
#include "extender/apiclient/kubeconfig.h"

namespace topofit::apiclient {

TokenSource::TokenSource(std::string static_token, std::string token_file, Clock::duration max_age)
    : static_token_(std::move(static_token)), token_file_(std::move(token_file)), max_age_(max_age) {}

std::string TokenSource::Token() {
  if (token_file_.empty()) return static_token_;
  std::lock_guard<std::mutex> lock(mu_);
  auto now = Clock::now();
  if (stale_ || now - read_at_ >= max_age_) {
    auto text = ReadFile(token_file_);
    if (text.ok()) {
      std::string t = std::move(*text);
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
      cached_ = std::move(t);
      stale_ = false;
      read_at_ = now;
    } else if (cached_.empty()) {
      return static_token_;  // Never read yet: fall back to a static token if the kubeconfig had one.
    }
  }
  return cached_;
}

void TokenSource::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  stale_ = true;
}

}  // namespace topofit::apiclient
