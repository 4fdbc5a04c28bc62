// groups_bench: the groups replay (groups_replay.h) on every cluster shape and size mix, one markdown
// table each - the tables of docs/groups.md.
//   groups_bench [--shape h100-spine|gb200-nvl72] [--mix helios-fit|multi-node] [--seed N] [--load L]
//                [--seeds N] [--churn N] [--group-half-life G] [--queue 1] [--pod-domain-loss 0] [--refusals 1]
// Without --shape or --mix, every shape or mix. --queue 1: the replay with a queue and its waits
// (groups_queue.h) instead. --pod-domain-loss 0: topofit's pods of no group without the domain loss.
// --refusals 1: also the GPUs refused while arrivals reach capacity, by whether the cluster had room.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/groups_queue.h"
#include "bench/groups_replay.h"

namespace {

struct Args {
  std::vector<std::string> shapes = {"h100-spine", "gb200-nvl72"};
  std::vector<std::string> mixes = {"helios-fit", "multi-node"};  // --mix openb+multi-node: asked by name.
  topofit::bench::GroupReplayOptions base;
  bool queue = false;
};

// False (after saying why) on an unknown flag or one without its value.
bool Parse(int argc, char** argv, Args& args) {
  if (argc % 2 == 0) {
    std::fprintf(stderr, "flags take a value: --shape, --mix, --seed, --seeds, --load, --churn, --group-half-life, --queue, --pod-domain-loss, --refusals\n");
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
    } else if (flag == "--churn") {
      args.base.churn_arrivals = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  return true;
}

// One table; false (after saying why) on bad options.
template <typename Run, typename Format>
bool Print(const topofit::bench::GroupReplayOptions& o, Run run, Format format) {
  auto rows = run(o);
  if (!rows.ok()) {
    std::fprintf(stderr, "%s\n", rows.error().c_str());
    return false;
  }
  std::printf("%s\n", format(o, *rows).c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!Parse(argc, argv, args)) return 2;
  for (const std::string& shape : args.shapes) {
    for (const std::string& mix : args.mixes) {
      topofit::bench::GroupReplayOptions o = args.base;
      o.shape = shape;
      o.mix = mix;
      const bool ok = args.queue ? Print(o, topofit::bench::RunGroupQueue, topofit::bench::FormatGroupQueue)
                                 : Print(o, topofit::bench::RunGroupReplay, topofit::bench::FormatGroupReplay);
      if (!ok) return 1;
    }
  }
  return 0;
}
