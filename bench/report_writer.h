#pragma once
// Writers for the result table: a fixed-width text table for the terminal, CSV, and JSON (one object
// per policy with the fields named in summary.h plus the averaged allocation curve).

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/summary.h"

namespace topofit::bench {

struct ReportContext {
  std::string trace;     // e.g. "openb_pod_list_default"
  std::string mode;      // "paper" or "time-ordered"
  std::string x_label;   // What curve x means.
  std::string dra_nodes = "none";  // Which GPU nodes DRA serves (CommonArgs::dra_nodes).
  double wall_seconds = 0;
};

std::string FormatTable(const ReportContext& ctx, const std::vector<PolicySummary>& rows);
std::string FormatCsv(const ReportContext& ctx, const std::vector<PolicySummary>& rows);
std::string FormatJson(const ReportContext& ctx, const std::vector<PolicySummary>& rows);

Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace topofit::bench
