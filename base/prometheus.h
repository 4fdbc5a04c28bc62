#pragma once
// Prometheus text exposition (format 0.0.4), the pieces every /metrics of topofit shares - `topofit
// serve` (extender/server/metrics.h) and `topofit node` (extender/node/plugin/node_metrics.h):
//   Histogram      cumulative buckets over fixed upper bounds, lock-free Observe (atomics), rendered
//                  as NAME_bucket{...,le="B"} for every bound and +Inf, NAME_sum (9 decimals) and
//                  NAME_count;
//   AppendFamily   the "# HELP" and "# TYPE" lines of a family;
//   LabelValue     a label value escaped as the format requires (backslash, quote, newline).
// A bound or a value renders with fmt's shortest round-trip form ("0.0001", "1", "2.5").

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace topofit {

class Histogram {
 public:
  // Upper bounds in seconds (or the unit of the family), ascending.
  explicit Histogram(std::initializer_list<double> bounds);
  template <typename Range>
  explicit Histogram(const Range& bounds) : Histogram(std::vector<double>(std::begin(bounds), std::end(bounds))) {}
  explicit Histogram(std::vector<double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_ns_.load(std::memory_order_relaxed) / 1e9; }
  // Appends the _bucket, _sum and _count lines. `labels`: "" or `a="x",b="y"` (escaped already),
  // placed before `le` in the buckets.
  void AppendTo(std::string& out, std::string_view name, std::string_view labels = "") const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // Not cumulative: one per bound.
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};  // The sum in billionths, so that it adds atomically.
};

// "# HELP name help\n# TYPE name type\n"; `type`: counter, gauge, histogram.
void AppendFamily(std::string& out, std::string_view name, std::string_view type, std::string_view help);

std::string LabelValue(std::string_view v);

}  // namespace topofit
