#include "bench/loadgen/hostile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "bench/loadgen/child_process.h"
#include "bench/loadgen/run_stats.h"

namespace topofit::bench::hostile {

namespace {

std::string Triple(std::vector<double> v) {
  return fmt::format("{:.2f} / {:.2f} / {:.2f}", Percentile(v, 0.5), Percentile(v, 0.9), Percentile(v, 0.99));
}

double P99(std::vector<double> v) { return Percentile(v, 0.99); }

}  // namespace

std::vector<double> Pooled(const ByRound& v) {
  std::vector<double> all;
  for (const auto& r : v) all.insert(all.end(), r.begin(), r.end());
  return all;
}

// The latency tables; whether every hostile kind's p99 of filter and of prioritize is within the bound.
bool PrintLatency(Samples& s, const Options& o) {
  std::printf("\ngood client, ms, all rounds    %-24s %-24s %-24s %6s %6s   %s\n", "filter p50 / p90 / p99", "prioritize",
              "filter + prioritize", "pods", "errors", "/healthz p50 / p90 / p99, errors");
  for (int p = 0; p < Kinds(o); ++p)
    std::printf("%-30s %-24s %-24s %-24s %6zu %6ld   %s, %ld\n", kPhaseNames[p], Triple(Pooled(s.filter[p])).c_str(),
                Triple(Pooled(s.prioritize[p])).c_str(), Triple(Pooled(s.cycle[p])).c_str(), Pooled(s.cycle[p]).size(), s.errors[p],
                Triple(Pooled(s.probe[p])).c_str(), s.probe_errors[p]);
  bool within = true;
  for (int p = kHostile; p < Kinds(o); ++p) {
    std::string line;
    for (auto* v : {s.filter, s.prioritize, s.cycle}) {
      double q = P99(Pooled(v[kQuiet])), h = P99(Pooled(v[p]));
      line += fmt::format("{}{:.2f}x", line.empty() ? "" : ", ", q > 0 ? h / q : 0);
      if (v != s.cycle) within = within && h <= std::max(o.max_p99_ratio * q, o.p99_floor_ms);
    }
    std::printf("p99 %s / quiet, all rounds: filter, prioritize, both: %s\n", kPhaseNames[p], line.c_str());
  }
  return within;
}

// Each round's p99 of filter and prioritize, and the median over rounds of hostile p99 / quiet p99.
void PrintRounds(Samples& s, const Options& o) {
  std::printf("\np99 by round, ms (filter | prioritize)\n");
  for (int p = 0; p < Kinds(o); ++p) {
    std::string f, pr;
    for (int r = 0; r < o.rounds; ++r) {
      f += fmt::format("{:8.2f}", P99(s.filter[p][r]));
      pr += fmt::format("{:8.2f}", P99(s.prioritize[p][r]));
    }
    std::printf("%-30s %s | %s\n", kPhaseNames[p], f.c_str(), pr.c_str());
  }
  for (int p = kHostile; p < Kinds(o); ++p) {
    std::vector<double> ratio[2];
    for (int r = 0; r < o.rounds; ++r)
      for (int v = 0; v < 2; ++v) {
        const ByRound& series = v == 0 ? s.filter[p] : s.prioritize[p];
        const ByRound& quiet = v == 0 ? s.filter[kQuiet] : s.prioritize[kQuiet];
        double q = P99(quiet[r]);
        if (q > 0) ratio[v].push_back(P99(series[r]) / q);
      }
    std::printf("median over rounds of p99 %s / quiet: filter %.2fx, prioritize %.2fx\n", kPhaseNames[p],
                Percentile(ratio[0], 0.5), Percentile(ratio[1], 0.5));
  }
}

// Where the time went: the server's handlers against the client's wait, and CPU by thread name.
void PrintCost(Samples& s, const Options& o) {
  std::printf("\nmean ms: client filter / server's filter handler; client prioritize / handler; /metrics scrapes failed\n");
  for (int p = 0; p < Kinds(o); ++p) {
    const PhaseCost& c = s.cost[p];
    auto mean = [](std::vector<double> v) { double t = 0; for (double x : v) t += x; return v.empty() ? 0 : t / double(v.size()); };
    std::printf("%-30s %7.2f / %7.2f; %7.2f / %7.2f; %d\n", kPhaseNames[p], mean(Pooled(s.filter[p])),
                c.handled[0] > 0 ? 1000 * c.handler_s[0] / c.handled[0] : 0, mean(Pooled(s.prioritize[p])),
                c.handled[1] > 0 ? 1000 * c.handler_s[1] / c.handled[1] : 0, c.scrapes_failed);
  }
  std::printf("\nCPU, %% of one core (per thread name; server, then this process)\n%-22s", "thread");
  for (int p = 0; p < Kinds(o); ++p) std::printf(" %26s", kPhaseNames[p]);
  std::printf("\n");
  for (bool server : {true, false}) {
    std::map<std::string, bool> names;
    for (int p = 0; p < Kinds(o); ++p)
      for (const auto& [name, cpu] : server ? s.cost[p].server_cpu : s.cost[p].loadgen_cpu) names[name] = true;
    for (const auto& [name, _] : names) {
      std::printf("%-22s", ((server ? "" : "loadgen ") + name).c_str());
      for (int p = 0; p < Kinds(o); ++p) {
        const auto& cpu = server ? s.cost[p].server_cpu : s.cost[p].loadgen_cpu;
        std::printf(" %26.1f", s.cost[p].seconds > 0 && cpu.count(name) ? 100 * cpu.at(name) / s.cost[p].seconds : 0);
      }
      std::printf("\n");
    }
  }
}

// The RSS line; peak / steady.
double PrintRss(Samples& s, pid_t pid) {
  std::vector<double> quiet(s.steady_kb.begin(), s.steady_kb.end());
  double steady = Percentile(quiet, 0.5), peak = 0;
  for (auto& v : s.rss_kb)
    for (long kb : v) peak = std::max(peak, double(kb));
  long hwm = ProcStatusKb(pid, "VmHWM");
  std::printf("\nserver RSS: steady (median of the first quiet phase) %.1f MiB, peak %.1f MiB (%.2fx), VmHWM %.1f MiB\n", steady / 1024,
              peak / 1024, steady > 0 ? peak / steady : 0, double(hwm) / 1024);
  return steady > 0 ? peak / steady : 0;
}

void PrintHostile(Samples& s, const Options& o) {
  for (int p = kHostile; p < Kinds(o); ++p) {
    std::string out;
    for (const auto& [what, n] : s.answered[p]) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", what, n);
    std::printf("hostile clients were answered (%s): %s\n", kPhaseNames[p], out.c_str());
  }
}

}  // namespace topofit::bench::hostile
