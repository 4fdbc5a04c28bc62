#pragma once
// ProgressBar: one self-overwriting line on stderr for long runs - only when stderr is a terminal, so
// logs and CI output stay clean. Thread-safe (Update may come from worker threads).

#include <chrono>
#include <mutex>
#include <string>

namespace topofit::bench {

class ProgressBar {
 public:
  // enabled defaults to isatty(stderr).
  explicit ProgressBar(std::string label);
  ProgressBar(std::string label, bool enabled);
  ~ProgressBar();
  void Update(int done, int total);
  void Finish();  // Clears the line.
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace topofit::bench
