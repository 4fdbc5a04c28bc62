#include "base/duration.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace topofit {
namespace {

// Nanoseconds per unit, or 0 when `u` is no unit.
int64_t UnitNanos(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xc2\xb5s" || u == "\xce\xbcs") return 1000;  // us, µ (micro sign), μ (mu)
  if (u == "ms") return 1000000;
  if (u == "s") return 1000000000;
  if (u == "m") return 60 * int64_t(1000000000);
  if (u == "h") return 3600 * int64_t(1000000000);
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("invalid duration '{}': {} (examples: 30s, 1.5m, 1h30m, 250ms)", text, why)};
  };
  if (text.empty()) return bad("empty");
  if (text[0] == '-' || text[0] == '+') return bad("a duration has no sign");
  long double total = 0;  // Nanoseconds; long double keeps 1.5 x 2^62 ns exact enough to range-check.
  size_t i = 0;
  bool any_unit = false;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    size_t int_end = i;
    size_t frac_start = i, frac_end = i;
    if (i < text.size() && text[i] == '.') {
      frac_start = ++i;
      while (i < text.size() && IsDigit(text[i])) ++i;
      frac_end = i;
    }
    if (int_end == start && frac_end == frac_start) return bad("expected a number");
    long double value = 0;
    for (size_t k = start; k < int_end; ++k) value = value * 10 + (text[k] - '0');
    long double scale = 0.1L;
    for (size_t k = frac_start; k < frac_end; ++k, scale /= 10) value += (text[k] - '0') * scale;
    size_t unit_start = i;
    while (i < text.size() && !IsDigit(text[i]) && text[i] != '.') ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    if (unit.empty()) {
      if (any_unit || i != text.size() || start != 0) return bad("missing unit after a number");
      total = value * 1e9L;  // A bare number: seconds.
      break;
    }
    int64_t per = UnitNanos(unit);
    if (per == 0) return bad(fmt::format("unknown unit '{}' (ns, us, ms, s, m, h)", unit));
    any_unit = true;
    total += value * per;
    if (total > 9.2e18L) return bad("too long");
  }
  if (total > 9.2e18L) return bad("too long");
  int64_t ns = static_cast<int64_t>(std::llroundl(total));
  if (ns <= 0) return bad("must be positive");
  return std::chrono::nanoseconds(ns);
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? uint64_t(-(ns + 1)) + 1 : uint64_t(ns);
  auto frac = [](uint64_t v, uint64_t per) {  // v / per with up to 9 fraction digits, no trailing zeros.
    std::string s = std::to_string(v / per);
    uint64_t rest = v % per;
    if (rest) {
      std::string digits = fmt::format("{:0{}}", rest, int(std::log10(double(per)) + 0.5));
      while (!digits.empty() && digits.back() == '0') digits.pop_back();
      s += "." + digits;
    }
    return s;
  };
  if (u < 1000) return sign + std::to_string(u) + "ns";
  if (u < 1000000) return sign + frac(u, 1000) + "us";
  if (u < 1000000000) return sign + frac(u, 1000000) + "ms";
  const uint64_t kSec = 1000000000, kMin = 60 * kSec, kHour = 60 * kMin;
  std::string out = sign;
  if (u >= kHour) out += std::to_string(u / kHour) + "h";
  if (u >= kMin) out += std::to_string(u % kHour / kMin) + "m";
  out += frac(u % kMin, kSec) + "s";
  return out;
}

}  // namespace topofit
