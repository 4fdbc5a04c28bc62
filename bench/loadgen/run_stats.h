#pragma once
// What the load benches (bench/loadgen) report beside their latencies: a percentile of a sample, and
// the machine's load average (the development machine is shared: a figure means little without it).

#include <algorithm>
#include <string>
#include <vector>

#include "base/files.h"

namespace topofit::bench {

// The q-quantile (0..1) of `v`, sorting it; 0 for an empty sample.
inline double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

// The 1-minute load average, as /proc/loadavg writes it ("3.12").
inline std::string LoadAverage() {
  auto s = ReadFile("/proc/loadavg");
  return s ? s->substr(0, s->find(' ')) : std::string();
}

}  // namespace topofit::bench
