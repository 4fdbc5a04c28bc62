#pragma once
// Kubernetes resource quantities ("4", "500m", "32Gi", "1e3", "+.5k") parsed exactly.
//
// Grammar (k8s.io/apimachinery resource.Quantity):
//   quantity ::= signedNumber suffix
//   number   ::= digits | digits "." digits | digits "." | "." digits
//   suffix   ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
//              | ("e" | "E") signedInteger
// The value is kept as sign * mantissa * 10^exp10 * 2^exp2 so that scaling is exact; conversions
// round up, as Quantity.Value() and MilliValue() do. Never throws.

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace topofit::k8s {

struct Quantity {
  bool negative = false;
  uint64_t mantissa = 0;  // Significant digits, trailing zeros folded into exp10.
  int exp10 = 0;
  int exp2 = 0;           // 0, 10, 20, ... 60 for the binary suffixes.
};

Result<Quantity> ParseQuantity(std::string_view text);

// ceil(q * 10^scale) as a signed integer; `exact` says whether no rounding happened. An Error when
// the result does not fit in int64.
struct Scaled {
  int64_t value = 0;
  bool exact = true;
};
Result<Scaled> ScaleQuantity(const Quantity& q, int scale);

// Convenience parsers with the resource named in errors.
Result<int64_t> ParseMilli(std::string_view text);       // cpu: "500m" -> 500, "2" -> 2000
Result<int64_t> ParseValue(std::string_view text);       // memory: "32Gi" -> 34359738368
// Extended resources such as nvidia.com/gpu: a whole, non-negative count; "0.5", "500m", "-1" fail.
Result<int64_t> ParseWholeCount(std::string_view text);

}  // namespace topofit::k8s
