// groups_bench: the groups replay (groups_replay.h) on every cluster shape and size mix, one markdown
// table each - the tables of docs/groups.md.
//   groups_bench [--shape h100-spine|gb200-nvl72] [--mix helios-fit|multi-node] [--seed N] [--load L]
//                [--seeds N] [--churn N] [--group-half-life G] [--queue 1] [--pod-domain-loss 0] [--refusals 1]
//                [--spread 1] [--by-size 1]
// Without --shape or --mix, every shape or mix. --queue 1: the replay with a queue and its waits
// (groups_queue.h) instead. --pod-domain-loss 0: topofit's pods of no group without the domain loss.
// --refusals 1: also the GPUs refused while arrivals reach capacity, by whether the cluster had room.
// --by-size 1: also the groups placed by job size, and the GPUs they asked in all (with --queue 1: the
// waits by job size).
// --spread 1: after the tables, the two placement targets with their spread over the seeds
// (groups_spread.h), one line per workload.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/groups_queue.h"
#include "bench/groups_replay.h"
#include "bench/groups_spread.h"

namespace {

struct Args {
  std::vector<std::string> shapes = {"h100-spine", "gb200-nvl72"};
  std::vector<std::string> mixes = {"helios-fit", "multi-node"};  // --mix openb+multi-node: asked by name.
  topofit::bench::GroupReplayOptions base;
  bool queue = false;
  bool spread = false;
};

// False (after saying why) on an unknown flag or one without its value.
bool Parse(int argc, char** argv, Args& args) {
  if (argc % 2 == 0) {
    std::fprintf(stderr, "flags take a value: --shape, --mix, --seed, --seeds, --load, --churn, --group-half-life, --queue, --pod-domain-loss, --refusals, --spread, --by-size\n");
    return false;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--shape") {
      args.shapes = {value};
    } else if (flag == "--mix") {
      args.mixes = {value};
    } else if (flag == "--seed") {
      args.base.seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--load") {
      args.base.load = std::strtod(value.c_str(), nullptr);
    } else if (flag == "--seeds") {
      args.base.seeds = std::atoi(value.c_str());
    } else if (flag == "--group-half-life") {
      args.base.group_half_life = std::strtod(value.c_str(), nullptr);
    } else if (flag == "--pod-domain-loss") {
      args.base.pod_domain_loss = value == "1";
    } else if (flag == "--refusals") {
      args.base.refusals = value == "1";
    } else if (flag == "--queue") {
      args.queue = value == "1";
    } else if (flag == "--by-size") {
      args.base.by_size = value == "1";
    } else if (flag == "--spread") {
      args.spread = value == "1";
    } else if (flag == "--churn") {
      args.base.churn_arrivals = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  return true;
}

// The queue replay's table of one workload; false (after saying why) on bad options.
bool PrintQueue(const topofit::bench::GroupReplayOptions& o) {
  auto rows = topofit::bench::RunGroupQueue(o);
  if (!rows.ok()) {
    std::fprintf(stderr, "%s\n", rows.error().c_str());
    return false;
  }
  std::printf("%s\n", topofit::bench::FormatGroupQueue(o, *rows).c_str());
  return true;
}

// The replay's table of one workload, and, when `spread` is given, its line of the targets' spread.
bool PrintReplay(const topofit::bench::GroupReplayOptions& o, std::string* spread) {
  auto rows = topofit::bench::RunGroupReplay(o);
  if (!rows.ok()) {
    std::fprintf(stderr, "%s\n", rows.error().c_str());
    return false;
  }
  std::printf("%s\n", topofit::bench::FormatGroupReplay(o, *rows).c_str());
  if (!spread) return true;
  auto s = topofit::bench::SpreadOverSeeds(*rows);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.error().c_str());
    return false;
  }
  *spread += topofit::bench::FormatTargetSpread(o, *s);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!Parse(argc, argv, args)) return 2;
  std::string spread;
  for (const std::string& shape : args.shapes) {
    for (const std::string& mix : args.mixes) {
      topofit::bench::GroupReplayOptions o = args.base;
      o.shape = shape;
      o.mix = mix;
      const bool ok = args.queue ? PrintQueue(o) : PrintReplay(o, args.spread ? &spread : nullptr);
      if (!ok) return 1;
    }
  }
  if (!spread.empty()) {
    std::printf("targets over the seeds: sums, and [2.5th, 97.5th] percentiles of 2,000 bootstrap resamples\n\n"
                "| load, workload | unallocated, topofit / best gang baseline (target <= 0.8) "
                "| spanning groups in one lowest domain, topofit - most of a baseline (target > 0) "
                "| GPUs of the groups placed, topofit / most of a gang baseline |\n"
                "|---|---|---|---|\n%s\n",
                spread.c_str());
  }
  return 0;
}
