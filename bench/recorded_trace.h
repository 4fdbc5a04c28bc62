#pragma once
// Reader for a recorded trace: what `topofit serve --record FILE` writes, one JSON object per line,
//   {"ts": <seconds or RFC 3339>, "verb": "filter", "request": {...ExtenderArgs...}, "response": {...}}
// so a real cluster's traffic replays offline. Pods come from the filter requests (the first filter of
// each pod UID is its arrival; kube-scheduler retries repeat it); pods asking for no GPU are kept too.
// Departures come from lines whose verb is "delete" (or "departure"), with "uid" or request.PodUID,
// when the recording has them; other verbs (prioritize, bind, preempt) are skipped. Times become
// seconds relative to the first line. Errors name the line.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "bench/workload.h"

namespace topofit::bench {

Result<std::vector<PodSpec>> ParseRecordedTrace(std::string_view jsonl);
Result<std::vector<PodSpec>> ReadRecordedTrace(const std::string& path);

}  // namespace topofit::bench
