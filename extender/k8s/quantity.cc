// Exact Kubernetes quantity parsing; see quantity.h for the grammar.
#include "extender/k8s/quantity.h"

#include <fmt/format.h>

#include <limits>

namespace topofit::k8s {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Error Bad(std::string_view text, std::string_view why) {
  return Error{fmt::format("invalid quantity '{}': {}", text, why)};
}

using u128 = unsigned __int128;

}  // namespace

Result<Quantity> ParseQuantity(std::string_view text) {
  Quantity q;
  size_t i = 0;
  const size_t n = text.size();
  if (n == 0) return Bad(text, "empty");
  if (n > 64) return Bad(text.substr(0, 64), "too long");
  if (text[i] == '+' || text[i] == '-') q.negative = text[i++] == '-';
  // Digits before and after the point; leading zeros skipped, at most 18 significant digits kept
  // (k8s itself keeps 18 in its fast path and the counts topofit reads are far smaller).
  bool any_digit = false, seen_point = false;
  int significant = 0;
  for (; i < n; ++i) {
    char c = text[i];
    if (c == '.') {
      if (seen_point) return Bad(text, "two decimal points");
      seen_point = true;
      continue;
    }
    if (!IsDigit(c)) break;
    any_digit = true;
    if (q.mantissa == 0 && c == '0') {
      if (seen_point) q.exp10 -= 1;
      continue;
    }
    if (significant == 18) {
      if (c != '0') return Bad(text, "more than 18 significant digits");
      if (!seen_point) q.exp10 += 1;  // A trailing zero of the integer part scales up.
      continue;
    }
    q.mantissa = q.mantissa * 10 + uint64_t(c - '0');
    ++significant;
    if (seen_point) q.exp10 -= 1;
  }
  if (!any_digit) return Bad(text, "no digits");
  std::string_view suffix = text.substr(i);
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    size_t k = kBinary.find(suffix[0]);
    if (k == std::string_view::npos) return Bad(text, fmt::format("unknown suffix '{}'", suffix));
    q.exp2 = int(k + 1) * 10;
  } else if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix != "E") {  // Bare "E" is exa.
    std::string_view e = suffix.substr(1);
    bool neg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      neg = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty()) return Bad(text, "exponent without digits");
    int exp = 0;
    for (char c : e) {
      if (!IsDigit(c)) return Bad(text, fmt::format("unknown suffix '{}'", suffix));
      exp = exp * 10 + (c - '0');
      if (exp > 1000) return Bad(text, "exponent out of range");
    }
    q.exp10 += neg ? -exp : exp;
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n': q.exp10 -= 9; break;
      case 'u': q.exp10 -= 6; break;
      case 'm': q.exp10 -= 3; break;
      case 'k': q.exp10 += 3; break;
      case 'M': q.exp10 += 6; break;
      case 'G': q.exp10 += 9; break;
      case 'T': q.exp10 += 12; break;
      case 'P': q.exp10 += 15; break;
      case 'E': q.exp10 += 18; break;
      default: return Bad(text, fmt::format("unknown suffix '{}'", suffix));
    }
  } else {
    return Bad(text, fmt::format("unknown suffix '{}'", suffix));
  }
  if (q.mantissa == 0) {
    q = Quantity{};
    return q;
  }
  while (q.mantissa % 10 == 0) {
    q.mantissa /= 10;
    q.exp10 += 1;
  }
  return q;
}

Result<Scaled> ScaleQuantity(const Quantity& q, int scale) {
  Scaled out;
  if (q.mantissa == 0) return out;
  constexpr u128 kMax = u128(std::numeric_limits<int64_t>::max());
  const int e = q.exp10 + scale;
  u128 num = u128(q.mantissa) << q.exp2;  // mantissa < 2^60, exp2 <= 60: fits.
  u128 mag;
  if (e >= 0) {
    mag = num;
    for (int k = 0; k < e; ++k) {
      mag *= 10;
      if (mag > kMax) return Error{"quantity out of range"};
    }
    if (mag > kMax) return Error{"quantity out of range"};
  } else if (-e > 38) {
    mag = 1;  // A positive value far below one unit rounds up to one.
    out.exact = false;
  } else {
    u128 den = 1;
    for (int k = 0; k < -e; ++k) den *= 10;
    mag = num / den;
    if (num % den != 0) {
      out.exact = false;
      if (!q.negative) mag += 1;  // ceil
    }
    if (mag > kMax) return Error{"quantity out of range"};
  }
  out.value = q.negative ? -int64_t(mag) : int64_t(mag);
  return out;
}

namespace {
Result<int64_t> ParseScaled(std::string_view text, int scale) {
  auto q = ParseQuantity(text);
  if (!q) return Error{q.error()};
  if (q->negative) return Bad(text, "negative");
  auto s = ScaleQuantity(*q, scale);
  if (!s) return Bad(text, s.error());
  return s->value;
}
}  // namespace

Result<int64_t> ParseMilli(std::string_view text) { return ParseScaled(text, 3); }
Result<int64_t> ParseValue(std::string_view text) { return ParseScaled(text, 0); }

Result<int64_t> ParseWholeCount(std::string_view text) {
  auto q = ParseQuantity(text);
  if (!q) return Error{q.error()};
  if (q->negative) return Bad(text, "negative count");
  auto s = ScaleQuantity(*q, 0);
  if (!s) return Bad(text, s.error());
  if (!s->exact) return Bad(text, "must be a whole number");
  return s->value;
}

}  // namespace topofit::k8s
