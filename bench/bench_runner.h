#pragma once
// The `topofit bench` subcommands as library functions: load the inputs, run a driver over the chosen
// policies, print the table, write CSV / JSON / plots. The CLI file only parses options into these
// structs; tests call the functions directly. Each returns the process exit status (0 ok, 1 runtime
// failure, 2 bad input) and prints errors on stderr.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/policy.h"
#include "bench/synthetic.h"

namespace topofit::bench {

struct OutputOptions {
  std::string json;
  std::string csv;
  std::string plots_dir;
};

struct CommonArgs {
  std::string policies;     // "a,b" or "" for all
  std::string gpu_models;   // "" = GpuModelMap::DefaultPath()
  int jobs = 0;
  PolicyOptions policy;
  OutputOptions out;
  // When set: write the cluster as a `topofit serve --snapshot` file (cluster_snapshot.h) and run nothing.
  std::string write_snapshot;
  // kube-scheduler's percentageOfNodesToScore (SimCluster::set_percentage_of_nodes_to_score).
  int percentage_of_nodes_to_score = 100;
  // Which GPU nodes kube-scheduler's DRA allocator serves: "none", "all" or "half" (dra_nodes.h).
  std::string dra_nodes = "none";
};

struct OpenbArgs {
  CommonArgs common;
  std::string nodes, pods;
  std::string seeds = "42-51";
  double stop_ratio = 1.3;
  bool time_ordered = false;  // Replay creation/deletion times instead of the paper protocol.
  std::string share;          // "MODEL@SHAPE,...": those models' nodes share their GPUs (ShareModels).
};

struct ReplayArgs {
  CommonArgs common;
  std::string snapshot, trace;
};

struct SyntheticArgs {
  SyntheticArgs() { spec.pods = 2000; }
  CommonArgs common;
  // What to generate (synthetic.h); `with_time`: arrivals and departures, replayed in time.
  SyntheticSpec spec;
  std::string seeds = "42-51";
};

int RunOpenbBench(const OpenbArgs& args);
int RunReplayBench(const ReplayArgs& args);
int RunSyntheticBench(const SyntheticArgs& args);
std::string ListPoliciesText();

// "42-51" or "1,5,9" or "7".
Result<std::vector<uint64_t>> ParseSeeds(const std::string& text);

}  // namespace topofit::bench
