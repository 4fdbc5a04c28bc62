#pragma once
// PNG plots of a bench result with gnuplot (Debian gnuplot-nox; `scripts/install-deps.sh plots`):
//   <dir>/<trace>-allocation.png   allocated GPUs (% of capacity) against arrived GPU request (% of
//                                  capacity) per policy, with the ideal y = x line, as the paper plots it;
//                                  for a time-ordered replay, allocated % against time.
//   <dir>/<trace>-bandwidth.png    mean predicted ring bandwidth of multi-GPU placements per policy and
//                                  GPU count, next to the best the cluster offered at those moments.
// The data (.dat) and script (.gp) are kept next to the PNGs so a plot can be restyled and redrawn.

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/report_writer.h"
#include "bench/summary.h"

namespace topofit::bench {

// Returns the PNG paths written, or an Error (gnuplot missing: the message says how to install it).
Result<std::vector<std::string>> WritePlots(const std::string& dir, const ReportContext& ctx,
                                            const std::vector<PolicySummary>& rows);

}  // namespace topofit::bench
