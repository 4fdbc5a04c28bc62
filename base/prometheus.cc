#include "base/prometheus.h"

#include <fmt/format.h>

namespace topofit {

Histogram::Histogram(std::initializer_list<double> bounds) : Histogram(std::vector<double>(bounds)) {}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size())) {
  for (size_t i = 0; i < bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      buckets_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(value > 0 ? uint64_t(value * 1e9) : 0, std::memory_order_relaxed);
}

void Histogram::AppendTo(std::string& out, std::string_view name, std::string_view labels) const {
  const std::string_view sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds_[i], cumulative);
  }
  const uint64_t n = count();
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, n);
  if (labels.empty()) {
    out += fmt::format("{}_sum {:.9f}\n{}_count {}\n", name, sum(), name, n);
  } else {
    out += fmt::format("{}_sum{{{}}} {:.9f}\n{}_count{{{}}} {}\n", name, labels, sum(), name, labels, n);
  }
}

void AppendFamily(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::string LabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace topofit
