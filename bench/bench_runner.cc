#include "bench/bench_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "base/log.h"
#include "bench/cluster_snapshot.h"
#include "bench/dra_nodes.h"
#include "bench/gpu_models.h"
#include "bench/openb_csv.h"
#include "bench/paper_driver.h"
#include "bench/plots.h"
#include "bench/progress_bar.h"
#include "bench/report_writer.h"
#include "bench/shared_metrics.h"
#include "bench/shared_node_types.h"
#include "bench/sim_cluster.h"
#include "bench/summary.h"
#include "bench/timed_driver.h"

namespace topofit::bench {

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    try {
      size_t dash = part.find('-');
      if (dash == std::string::npos) {
        out.push_back(std::stoull(part));
      } else {
        uint64_t a = std::stoull(part.substr(0, dash)), b = std::stoull(part.substr(dash + 1));
        if (b < a || b - a > 10000) return Error{"bad seed range '" + part + "'"};
        for (uint64_t s = a; s <= b; ++s) out.push_back(s);
      }
    } catch (const std::exception&) {
      return Error{"bad seed '" + part + "': expected N, N-M or a comma-separated list"};
    }
  }
  if (out.empty()) return Error{"no seeds given"};
  return out;
}

std::string ListPoliciesText() {
  std::string out;
  for (const auto& p : AllPolicies()) out += fmt::format("{:<22} {}\n", p.name, p.description);
  return out;
}

namespace {

std::string Stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// Prints the table and writes every requested output; the shared tail of all subcommands.
int Report(const ReportContext& ctx, const std::vector<RunMetrics>& runs, const OutputOptions& out) {
  // Paper curves end at 130% arrival; time-ordered ones run to the last arrival (hours).
  auto rows = Summarize(runs, ctx.mode == "paper" ? 130 : 1e9);
  std::fputs(FormatTable(ctx, rows).c_str(), stdout);
  std::fputs(FormatSharedTable(runs).c_str(), stdout);
  std::printf("wall time %.1f s\n", ctx.wall_seconds);
  int status = 0;
  for (const auto& r : rows)
    if (!r.error.empty()) status = 1;
  if (!out.csv.empty()) {
    if (auto st = WriteTextFile(out.csv, FormatCsv(ctx, rows)); !st) {
      Log(LogLevel::kError, "bench failed", {{"error", st.error()}});
      status = 1;
    }
  }
  if (!out.json.empty()) {
    if (auto st = WriteTextFile(out.json, FormatJson(ctx, rows)); !st) {
      Log(LogLevel::kError, "bench failed", {{"error", st.error()}});
      status = 1;
    }
  }
  if (!out.plots_dir.empty()) {
    auto pngs = WritePlots(out.plots_dir, ctx, rows);
    if (!pngs) {
      Log(LogLevel::kError, "bench failed", {{"error", "plots: " + pngs.error()}});
      status = 1;
    } else {
      for (const auto& p : *pngs) std::printf("wrote %s\n", p.c_str());
    }
  }
  return status;
}

Result<GpuModelMap> LoadMap(const CommonArgs& c) {
  return GpuModelMap::Load(c.gpu_models.empty() ? GpuModelMap::DefaultPath() : c.gpu_models);
}

// Marks the DRA-backed nodes (--dra-nodes); an error for a name it does not know, and with --via-http
// or --write-snapshot, whose served cluster knows nodes only (cluster_snapshot.h).
Status SetUpDraNodes(SimCluster& cluster, const CommonArgs& c) {
  auto mode = ParseDraNodes(c.dra_nodes);
  if (!mode) return Error{mode.error()};
  if (*mode != DraNodes::kNone && (!c.policy.via_http.empty() || !c.write_snapshot.empty()))
    return Error{"--dra-nodes is in-process only: not with --via-http or --write-snapshot"};
  MarkDraNodes(cluster, *mode);
  return Status::Ok();
}

}  // namespace

int RunCommon(const std::string& trace, SimCluster& cluster, const std::vector<PodSpec>& pods, const CommonArgs& c,
              const std::vector<uint64_t>& seeds, bool time_ordered, double stop_ratio) {
  if (auto st = SetUpDraNodes(cluster, c); !st) {
    Log(LogLevel::kError, "bench failed", {{"error", st.error()}});
    return 2;
  }
  if (!c.write_snapshot.empty()) {
    if (auto st = WriteTextFile(c.write_snapshot, ClusterSnapshotJson(cluster)); !st) {
      Log(LogLevel::kError, "bench failed", {{"error", st.error()}});
      return 1;
    }
    std::printf("wrote %s (%zu nodes)\n", c.write_snapshot.c_str(), cluster.nodes().size());
    return 0;
  }
  cluster.set_percentage_of_nodes_to_score(c.percentage_of_nodes_to_score);
  auto policies = SelectPolicies(c.policies);
  if (!policies) {
    Log(LogLevel::kError, "bench failed", {{"error", policies.error()}});
    return 2;
  }
  Log(LogLevel::kInfo, "bench started",
      {{"trace", trace}, {"mode", time_ordered ? "time-ordered" : "paper"}, {"nodes", std::to_string(cluster.nodes().size())},
       {"pods", std::to_string(pods.size())}, {"policies", std::to_string(policies->size())},
       {"seeds", std::to_string(seeds.size())}, {"dra_nodes", c.dra_nodes}});
  ProgressBar bar("bench " + trace);
  auto progress = [&](int done, int total) { bar.Update(done, total); };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<RunMetrics> runs;
  if (time_ordered) {
    runs = RunTimeOrderedAll(cluster, pods, *policies, seeds, c.policy, c.jobs, progress);
  } else {
    PaperOptions o;
    o.seeds = seeds;
    o.stop_ratio = stop_ratio;
    o.jobs = c.jobs;
    o.policy = c.policy;
    o.on_progress = progress;
    runs = RunPaperProtocol(cluster, pods, *policies, o);
  }
  bar.Finish();
  ReportContext ctx;
  ctx.trace = trace;
  ctx.mode = time_ordered ? "time-ordered" : "paper";
  ctx.dra_nodes = c.dra_nodes;
  ctx.x_label = time_ordered ? "hours since the first arrival" : "arrived GPU request, % of capacity";
  ctx.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Log(LogLevel::kInfo, "bench finished", {{"trace", trace}, {"runs", std::to_string(runs.size())},
                                          {"wall_s", fmt::format("{:.1f}", ctx.wall_seconds)}});
  return Report(ctx, runs, c.out);
}

int RunOpenbBench(const OpenbArgs& a) {
  auto seeds = ParseSeeds(a.seeds);
  auto map = LoadMap(a.common);
  auto nodes = ReadOpenbNodes(a.nodes);
  auto pods = ReadOpenbPods(a.pods);
  for (const std::string* err : {seeds ? nullptr : &seeds.error(), map ? nullptr : &map.error(),
                                 nodes ? nullptr : &nodes.error(), pods ? nullptr : &pods.error()}) {
    if (err) {
      Log(LogLevel::kError, "bench failed", {{"error", *err}});
      return 2;
    }
  }
  if (Status st = ShareModels(a.share, *map, *nodes); !st.ok()) {
    Log(LogLevel::kError, "bench failed", {{"error", st.error()}});
    return 2;
  }
  auto cluster = SimCluster::Build(std::move(nodes).value(), *map);
  if (!cluster) {
    Log(LogLevel::kError, "bench failed", {{"error", cluster.error()}});
    return 2;
  }
  return RunCommon(Stem(a.pods), **cluster, *pods, a.common, *seeds, a.time_ordered, a.stop_ratio);
}

}  // namespace topofit::bench
