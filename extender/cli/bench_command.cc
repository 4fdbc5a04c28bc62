// `topofit bench`: the trace replay bench. Options only; the work is in bench/bench_runner.h.
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>

#include "base/log.h"
#include "bench/bench_runner.h"
#include "extender/cli/command.h"
#include "extender/server/serve_config.h"

namespace topofit::cli {
namespace {

// The bench's options that are not one field of its arguments: the serve config file, and the flags
// that override one setting of it.
struct ConfigArgs {
  std::string file;
  std::optional<double> interconnect_rate;
};

// The scoring section of a `topofit serve --config` file, so the bench runs the pipeline as served;
// then --interconnect-rate.
int ApplyServeConfig(const ConfigArgs& config, bench::CommonArgs* c) {
  if (!config.file.empty()) {
    server::ServeConfig cfg;
    if (Status s = server::ApplyConfigFile(config.file, cfg); !s.ok()) {
      Log(LogLevel::kError, "bench failed", {{"error", s.error()}});
      return 2;
    }
    c->policy.pipeline = cfg.pipeline;
  }
  if (config.interconnect_rate) c->policy.pipeline.interconnect_rate = *config.interconnect_rate;
  return 0;
}

void AddCommon(CLI::App* app, bench::CommonArgs* c, ConfigArgs* config) {
  app->add_option("--policies", c->policies, "Comma-separated policies (default: all; see --list-policies)");
  app->add_option("--gpu-models", c->gpu_models, "GPU model -> topology map (default: gpu-models.csv beside topofit)");
  app->add_option("--jobs,-j", c->jobs, "Parallel runs (default: number of CPUs)");
  app->add_option("--via-http", c->policy.via_http,
                  "Send topofit's filter/prioritize/bind to a running `topofit serve` at this URL prefix");
  app->add_option("--extender-weight", c->policy.extender_weight, "The extender's weight in the scheduler config")
      ->capture_default_str();
  app->add_option("--config", config->file, "A `topofit serve --config` YAML file: its scoring weights and request mix");
  app->add_option("--interconnect-rate", config->interconnect_rate,
                  "scoring.interconnectRate for the topofit policies (over --config): GPUs of fragmentation per GPU of a "
                  "multi-GPU pod for the best ring; inf: best ring first")
      ->check(CLI::Range(0.0, std::numeric_limits<double>::infinity()));
  app->add_option("--percentage-of-nodes-to-score", c->percentage_of_nodes_to_score,
                  "kube-scheduler's percentageOfNodesToScore: 1-100, or 0 for its adaptive default")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app->add_option("--dra-nodes", c->dra_nodes,
                  "GPU nodes served by kube-scheduler's DRA allocator (first fit) instead of the device plugin: "
                  "none, all, or half (every other node of each type)")
      ->check(CLI::IsMember({"none", "all", "half"}))
      ->capture_default_str();
  app->add_option("--write-snapshot", c->write_snapshot,
                  "Write the simulated cluster as a `topofit serve --snapshot` file (for --via-http) and exit");
  app->add_option("--json", c->out.json, "Write the result table as JSON");
  app->add_option("--csv", c->out.csv, "Write the result table as CSV");
  app->add_option("--plots", c->out.plots_dir, "Write PNG plots (gnuplot) into this directory");
}

CLI::App* AddOpenb(CLI::App& sub, bench::OpenbArgs* openb, ConfigArgs* config) {
  CLI::App* o = sub.add_subcommand("openb", "The openb paper protocol (or --time-ordered) on openb CSVs");
  o->add_option("--nodes", openb->nodes, "Node list CSV (openb_node_list_*.csv)")->required();
  o->add_option("--pods", openb->pods, "Pod list CSV (openb_pod_list_*.csv)")->required();
  o->add_option("--seeds", openb->seeds, "Seeds: N, N-M or a list")->capture_default_str();
  o->add_option("--stop", openb->stop_ratio, "Stop when the arrived GPU request reaches this x capacity")
      ->capture_default_str();
  o->add_flag("--time-ordered", openb->time_ordered, "Replay creation/deletion times instead");
  o->add_option("--share", openb->share,
                "Share the GPUs of these models' nodes: MODEL@ts<R>|@mps<R>|@mig-<g>g.<mem>gb,... (docs/shared-gpus.md)");
  AddCommon(o, &openb->common, config);
  return o;
}

CLI::App* AddReplay(CLI::App& sub, bench::ReplayArgs* replay, ConfigArgs* config) {
  CLI::App* r = sub.add_subcommand("replay", "Time-ordered replay of a snapshot plus a JSON-lines trace");
  r->add_option("--snapshot", replay->snapshot, "Nodes (and bound pods): JSON from kubectl or topofit")->required();
  r->add_option("--trace", replay->trace, "JSON-lines trace, e.g. `topofit serve --record` output")->required();
  AddCommon(r, &replay->common, config);
  return r;
}

CLI::App* AddSynthetic(CLI::App& sub, bench::SyntheticArgs* synth, ConfigArgs* config) {
  CLI::App* s = sub.add_subcommand("synthetic", "A seeded synthetic cluster and workload");
  s->add_option("--family", synth->spec.family,
                 "Workload family: gpu-model, multi-gpu or cpu-heavy on a heterogeneous cluster; shared on one with "
                "time-sliced and MIG nodes (default: the plain mix)");
  s->add_option("--node-mix", synth->spec.node_mix,
                "profile[@ts<R>|@mps<R>|@mig-<g>g.<mem>gb]:count,... (default: the family's; plain: "
                "dgx1-v100:16,pcie-8-dual-socket:16,phb-2-workstation:32)");
  s->add_option("--size-mix", synth->spec.size_mix, "gpus:weight,... (default: the family's; plain: 1:70,2:10,4:10,8:10)");
  s->add_option("--pods", synth->spec.pods, "Pods in the generated list")->capture_default_str();
  s->add_option("--seed", synth->spec.seed, "Generator seed")->capture_default_str();
  s->add_option("--seeds", synth->seeds, "Replay seeds")->capture_default_str();
  s->add_flag("--time-ordered", synth->spec.with_time, "Generate arrivals and departures and replay them in time");
  AddCommon(s, &synth->common, config);
  return s;
}

}  // namespace

CommandRun SetupBench(CLI::App& sub) {
  auto list = std::make_shared<bool>(false);
  auto openb = std::make_shared<bench::OpenbArgs>();
  auto replay = std::make_shared<bench::ReplayArgs>();
  auto synth = std::make_shared<bench::SyntheticArgs>();
  auto config = std::make_shared<ConfigArgs>();
  sub.add_flag("--list-policies", *list, "Name the policies and exit");
  sub.require_subcommand(0, 1);
  CLI::App* o = AddOpenb(sub, openb.get(), config.get());
  CLI::App* r = AddReplay(sub, replay.get(), config.get());
  CLI::App* s = AddSynthetic(sub, synth.get(), config.get());

  return CommandRun([&sub, o, r, s, list, openb, replay, synth, config]() -> int {
    if (*list) {
      std::fputs(bench::ListPoliciesText().c_str(), stdout);
      return 0;
    }
    if (o->parsed()) {
      if (int rc = ApplyServeConfig(*config, &openb->common)) return rc;
      return bench::RunOpenbBench(*openb);
    }
    if (r->parsed()) {
      if (int rc = ApplyServeConfig(*config, &replay->common)) return rc;
      return bench::RunReplayBench(*replay);
    }
    if (s->parsed()) {
      if (int rc = ApplyServeConfig(*config, &synth->common)) return rc;
      return bench::RunSyntheticBench(*synth);
    }
    std::fputs(sub.help().c_str(), stdout);
    return 2;
  });
}

}  // namespace topofit::cli
