#pragma once
// ParseDuration: the one duration grammar of topofit, for flags and the config file alike.
//
// Grammar: Go's time.ParseDuration (what kubectl and kube-scheduler's config accept) - one or more
// decimal numbers, each with a unit: "300ms", "1.5m", "1h30m", "2h45m10.5s"; units ns, us (or µs),
// ms, s, m, h - plus a bare number meaning seconds ("30"), as Kubernetes' own seconds fields do.
// Contract: the result is positive and fits in int64 nanoseconds (about 292 years); zero, a sign,
// an unknown unit, an empty string or trailing text is an Error naming the text and what is wrong.

#include <chrono>
#include <string_view>

#include "base/status.h"

namespace topofit {

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// "1h30m0s", "1.5s", "250ms": the shortest text ParseDuration reads back as `d`, as Go prints it.
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace topofit
