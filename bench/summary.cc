#include "bench/summary.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace topofit::bench {

double Percentile(std::vector<float> sample, double p) {
  if (sample.empty()) return 0;
  size_t rank = size_t(std::ceil(p / 100.0 * double(sample.size())));
  rank = std::clamp<size_t>(rank, 1, sample.size());
  std::nth_element(sample.begin(), sample.begin() + (rank - 1), sample.end());
  return sample[rank - 1];
}

namespace {

// Allocated % after the last arrival at or below each grid point (the curve is a step function).
std::vector<double> OnGrid(const std::vector<CurvePoint>& curve, int points) {
  std::vector<double> out(points, 0);
  size_t k = 0;
  double last = 0;
  for (int g = 0; g < points; ++g) {
    while (k < curve.size() && curve[k].x <= g + 1e-9) last = curve[k++].allocated_pct;
    out[g] = last;
  }
  return out;
}

// What the runs of one policy add up to, before the averages.
struct Totals {
  std::vector<float> decisions, cpu, no_gpu, no_gpu_cpu;
  int64_t best = 0, node_best = 0;
  double bw = 0, best_bw = 0;
  double max_x = 0;
};

void AddRun(const RunMetrics& r, PolicySummary& s, Totals& t) {
  if (!r.error.empty()) s.error = r.error;
  s.unallocated_gpu_pct += r.unallocated_pct_at_100;
  s.unallocated_gpu_pct_runs.push_back(r.unallocated_pct_at_100);
  s.failed_pods += double(r.failed_pods_at_100);
  s.failed_pods_total += double(r.failed_pods);
  for (const auto& [k, v] : r.unallocated_at_100) s.unallocated_at_100_by_node[k] += double(v);
  for (const auto& [k, v] : r.failed_at_100) s.failed_at_100_by_request[k] += double(v);
  for (const auto& m : r.multi) {
    ++s.multi_gpu_pods;
    t.bw += m.bandwidth_gbps;
    t.best_bw += m.best_gbps;
    if (m.bandwidth_gbps + 1e-9 >= m.best_gbps) ++t.best;
    if (m.bandwidth_gbps + 1e-9 >= m.node_best_gbps) ++t.node_best;
    s.multi.push_back(m);
  }
  t.decisions.insert(t.decisions.end(), r.decision_us.begin(), r.decision_us.end());
  t.cpu.insert(t.cpu.end(), r.decision_cpu_us.begin(), r.decision_cpu_us.end());
  t.no_gpu.insert(t.no_gpu.end(), r.no_gpu_decision_us.begin(), r.no_gpu_decision_us.end());
  t.no_gpu_cpu.insert(t.no_gpu_cpu.end(), r.no_gpu_decision_cpu_us.begin(), r.no_gpu_decision_cpu_us.end());
  if (!r.curve.empty()) t.max_x = std::max(t.max_x, r.curve.back().x);
}

// The sums become means over the runs, with the spread of the unallocated share.
void Average(const std::vector<const RunMetrics*>& g, const Totals& t, PolicySummary& s) {
  double n = std::max(1, s.runs);
  s.unallocated_gpu_pct /= n;
  s.failed_pods /= n;
  s.failed_pods_total /= n;
  for (auto& [k, v] : s.unallocated_at_100_by_node) v /= n;
  for (auto& [k, v] : s.failed_at_100_by_request) v /= n;
  if (s.runs > 1) {
    double var = 0;
    for (const auto* r : g) var += std::pow(r->unallocated_pct_at_100 - s.unallocated_gpu_pct, 2);
    s.unallocated_gpu_pct_stddev = std::sqrt(var / (s.runs - 1));
  }
  if (s.multi_gpu_pods > 0) {
    s.multi_gpu_best_set_pct = 100.0 * double(t.best) / double(s.multi_gpu_pods);
    s.multi_gpu_node_best_set_pct = 100.0 * double(t.node_best) / double(s.multi_gpu_pods);
    s.multi_gpu_mean_bandwidth_gbps = t.bw / double(s.multi_gpu_pods);
    s.multi_gpu_mean_best_gbps = t.best_bw / double(s.multi_gpu_pods);
  }
}

void SetLatencies(const Totals& t, PolicySummary& s) {
  s.decision_us_p50 = Percentile(t.decisions, 50);
  s.decision_us_p99 = Percentile(t.decisions, 99);
  s.decision_cpu_us_p50 = Percentile(t.cpu, 50);
  s.decision_cpu_us_p99 = Percentile(t.cpu, 99);
  s.no_gpu_decision_us_p50 = Percentile(t.no_gpu, 50);
  s.no_gpu_decision_us_p99 = Percentile(t.no_gpu, 99);
  s.no_gpu_decision_cpu_us_p50 = Percentile(t.no_gpu_cpu, 50);
  s.no_gpu_decision_cpu_us_p99 = Percentile(t.no_gpu_cpu, 99);
}

// The share of the extender's decisions kube-scheduler overrode, and the mean allocation curve on
// the integer grid up to `grid_max`.
void SetOverridesAndCurve(const std::vector<const RunMetrics*>& g, double max_x, double grid_max, PolicySummary& s) {
  int64_t ext_decisions = 0, ext_overridden = 0;
  for (const auto* r : g) {
    ext_decisions += r->extender.decisions;
    ext_overridden += r->extender.overridden;
    s.dra_binds += r->extender.dra_binds;
    s.dra_mispredicted += r->extender.dra_mispredicted;
  }
  if (ext_decisions > 0) s.kube_override_pct = 100.0 * double(ext_overridden) / double(ext_decisions);
  int points = int(std::min(grid_max, std::floor(max_x))) + 1;
  if (points > 0 && !g.empty()) {
    std::vector<double> acc(points, 0);
    for (const auto* r : g) {
      auto v = OnGrid(r->curve, points);
      for (int i = 0; i < points; ++i) acc[i] += v[i];
    }
    for (int i = 0; i < points; ++i) s.curve.push_back({double(i), acc[i] / double(g.size())});
  }
}

PolicySummary SummarizePolicy(const std::string& name, const std::vector<const RunMetrics*>& g, double grid_max) {
  PolicySummary s;
  s.policy = name;
  s.runs = int(g.size());
  Totals t;
  for (const auto* r : g) AddRun(*r, s, t);
  Average(g, t, s);
  SetLatencies(t, s);
  SetOverridesAndCurve(g, t.max_x, grid_max, s);
  return s;
}

}  // namespace

std::vector<PolicySummary> Summarize(const std::vector<RunMetrics>& runs, double grid_max) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunMetrics*>> groups;
  for (const auto& r : runs) {
    if (!groups.count(r.policy)) order.push_back(r.policy);
    groups[r.policy].push_back(&r);
  }
  std::vector<PolicySummary> out;
  for (const auto& name : order) out.push_back(SummarizePolicy(name, groups[name], grid_max));
  return out;
}

}  // namespace topofit::bench
