#include "bench/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace topofit::bench {

ProgressBar::ProgressBar(std::string label) : ProgressBar(std::move(label), isatty(STDERR_FILENO) == 1) {}

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(int done, int total) {
  if (!enabled_ || total <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  constexpr int kWidth = 30;
  int filled = done * kWidth / total;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%s [%s] %d/%d  %.1fs", label_.c_str(), bar.c_str(), done, total, secs);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace topofit::bench
