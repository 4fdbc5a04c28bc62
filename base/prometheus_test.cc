#include "base/prometheus.h"

#include <doctest/doctest.h>

namespace topofit {

TEST_CASE("prometheus: a histogram renders cumulative buckets, +Inf, sum and count, with or without labels") {
  Histogram h{0.001, 0.5, 2};
  h.Observe(0.0005);
  h.Observe(0.25);
  h.Observe(0.5);
  h.Observe(3);
  std::string out;
  h.AppendTo(out, "x_seconds");
  CHECK(out ==
        "x_seconds_bucket{le=\"0.001\"} 1\n"
        "x_seconds_bucket{le=\"0.5\"} 3\n"
        "x_seconds_bucket{le=\"2\"} 3\n"
        "x_seconds_bucket{le=\"+Inf\"} 4\n"
        "x_seconds_sum 3.750500000\n"
        "x_seconds_count 4\n");
  out.clear();
  h.AppendTo(out, "x_seconds", "verb=\"bind\"");
  CHECK(out.find("x_seconds_bucket{verb=\"bind\",le=\"0.001\"} 1\n") == 0);
  CHECK(out.find("x_seconds_sum{verb=\"bind\"} 3.750500000\nx_seconds_count{verb=\"bind\"} 4\n") != std::string::npos);
  CHECK(h.count() == 4);
}

TEST_CASE("prometheus: family header lines and label escaping") {
  std::string out;
  AppendFamily(out, "a_total", "counter", "What is counted.");
  CHECK(out == "# HELP a_total What is counted.\n# TYPE a_total counter\n");
  CHECK(LabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

}  // namespace topofit
