#include "bench/report_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace topofit::bench {

std::string FormatTable(const ReportContext& ctx, const std::vector<PolicySummary>& rows) {
  std::string out = fmt::format("trace {} ({}{}), {} run(s) per policy\n", ctx.trace, ctx.mode,
                                ctx.dra_nodes == "none" ? "" : ", DRA nodes: " + ctx.dra_nodes,
                                rows.empty() ? 0 : rows.front().runs);
  out += fmt::format("{:<22} {:>14} {:>8} {:>9} {:>10} {:>11} {:>11} {:>9} {:>9} {:>10}\n", "policy",
                     "unalloc GPU %", "stddev", "failed", "multi-GPU", "best set %", "mean GB/s", "p50 us", "p99 us",
                     "override %");
  for (const auto& r : rows) {
    if (!r.error.empty()) {
      out += fmt::format("{:<22} error: {}\n", r.policy, r.error);
      continue;
    }
    out += fmt::format("{:<22} {:>14.2f} {:>8.2f} {:>9.1f} {:>10} {:>11.1f} {:>11.1f} {:>9.1f} {:>9.1f} {:>10}\n",
                       r.policy, r.unallocated_gpu_pct, r.unallocated_gpu_pct_stddev, r.failed_pods, r.multi_gpu_pods,
                       r.multi_gpu_best_set_pct, r.multi_gpu_mean_bandwidth_gbps, r.decision_us_p50,
                       r.decision_us_p99,
                       r.kube_override_pct < 0 ? std::string("-") : fmt::format("{:.2f}", r.kube_override_pct));
  }
  return out;
}

std::string FormatCsv(const ReportContext& ctx, const std::vector<PolicySummary>& rows) {
  std::string out =
      "trace,mode,policy,runs,unallocated_gpu_pct,unallocated_gpu_pct_stddev,failed_pods,failed_pods_total,"
      "multi_gpu_pods,multi_gpu_best_set_pct,multi_gpu_mean_bandwidth_gbps,multi_gpu_mean_best_gbps,"
      "decision_us_p50,decision_us_p99,kube_override_pct\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.2f},{:.2f},{},{:.2f},{:.3f},{:.3f},{:.2f},{:.2f},{:.3f}\n", ctx.trace,
                       ctx.mode, r.policy, r.runs, r.unallocated_gpu_pct, r.unallocated_gpu_pct_stddev, r.failed_pods,
                       r.failed_pods_total, r.multi_gpu_pods, r.multi_gpu_best_set_pct,
                       r.multi_gpu_mean_bandwidth_gbps, r.multi_gpu_mean_best_gbps, r.decision_us_p50,
                       r.decision_us_p99, r.kube_override_pct);
  }
  return out;
}

std::string FormatJson(const ReportContext& ctx, const std::vector<PolicySummary>& rows) {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json curve_x = nlohmann::json::array(), curve_y = nlohmann::json::array();
    for (const auto& p : r.curve) {
      curve_x.push_back(p.x);
      curve_y.push_back(std::round(p.allocated_pct * 1000) / 1000);
    }
    nlohmann::json o = {
        {"policy", r.policy},
        {"runs", r.runs},
        {"unallocated_gpu_pct", r.unallocated_gpu_pct},
        {"unallocated_gpu_pct_stddev", r.unallocated_gpu_pct_stddev},
        {"failed_pods", r.failed_pods},
        {"failed_pods_total", r.failed_pods_total},
        {"multi_gpu_pods", r.multi_gpu_pods},
        {"multi_gpu_best_set_pct", r.multi_gpu_best_set_pct},
        {"multi_gpu_node_best_set_pct", r.multi_gpu_node_best_set_pct},
        {"multi_gpu_mean_bandwidth_gbps", r.multi_gpu_mean_bandwidth_gbps},
        {"multi_gpu_mean_best_gbps", r.multi_gpu_mean_best_gbps},
        {"decision_us_p50", r.decision_us_p50},
        {"decision_us_p99", r.decision_us_p99},
        {"decision_cpu_us_p50", r.decision_cpu_us_p50},
        {"decision_cpu_us_p99", r.decision_cpu_us_p99},
        {"no_gpu_decision_us_p50", r.no_gpu_decision_us_p50},
        {"no_gpu_decision_us_p99", r.no_gpu_decision_us_p99},
        {"no_gpu_decision_cpu_us_p50", r.no_gpu_decision_cpu_us_p50},
        {"no_gpu_decision_cpu_us_p99", r.no_gpu_decision_cpu_us_p99},
        {"kube_override_pct", r.kube_override_pct},
        {"dra_binds", r.dra_binds},
        {"dra_mispredicted", r.dra_mispredicted},
        {"curve", {{"x", curve_x}, {"allocated_gpu_pct", curve_y}}},
    };
    o["unallocated_gpu_pct_runs"] = r.unallocated_gpu_pct_runs;
    if (!r.unallocated_at_100_by_node.empty()) o["unallocated_at_100_by_node"] = r.unallocated_at_100_by_node;
    if (!r.failed_at_100_by_request.empty()) o["failed_at_100_by_request"] = r.failed_at_100_by_request;
    if (!r.error.empty()) o["error"] = r.error;
    policies.push_back(std::move(o));
  }
  nlohmann::json doc = {{"trace", ctx.trace},         {"mode", ctx.mode},
                        {"curve_x", ctx.x_label},     {"wall_seconds", ctx.wall_seconds},
                        {"dra_nodes", ctx.dra_nodes},
                        {"policies", policies}};
  return doc.dump(2) + "\n";
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{"cannot write " + path};
  out << text;
  if (!out) return Error{"error writing " + path};
  return Status::Ok();
}

}  // namespace topofit::bench
