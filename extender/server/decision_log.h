#pragma once
// DecisionLog: one structured line per decision at info level, to stderr, in logfmt:
//   ts=2026-11-22T00:40:01.123Z level=info verb=bind pod=ml/train-0 node=dgx-v100-1 gpus=0,1,2,3 took_us=41
// Lines are written whole (one fwrite under a mutex) so concurrent verbs never interleave.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topofit::server {

using LogFields = std::vector<std::pair<std::string_view, std::string>>;

void LogDecision(std::string_view level, std::string_view verb, const LogFields& fields);

// Quotes a logfmt value when it needs it.
std::string LogValue(std::string_view v);

}  // namespace topofit::server
