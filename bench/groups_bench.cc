// groups_bench: the groups replay (groups_replay.h) on every cluster shape and size mix, one markdown
// table each - the tables of docs/groups.md.
//   groups_bench [--shape h100-spine|gb200-nvl72] [--mix helios-fit|multi-node] [--seed N] [--load L]
//                [--seeds N] [--churn N] [--group-half-life G] [--queue 1]
// Without --shape or --mix, every shape or mix. --queue 1: the replay with a queue and its waits
// (groups_queue.h) instead.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/groups_queue.h"
#include "bench/groups_replay.h"

int main(int argc, char** argv) {
  std::vector<std::string> shapes = {"h100-spine", "gb200-nvl72"};
  std::vector<std::string> mixes = {"helios-fit", "multi-node"};
  topofit::bench::GroupReplayOptions base;
  bool queue = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--shape") {
      shapes = {value};
    } else if (flag == "--mix") {
      mixes = {value};
    } else if (flag == "--seed") {
      base.seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--load") {
      base.load = std::strtod(value.c_str(), nullptr);
    } else if (flag == "--seeds") {
      base.seeds = std::atoi(value.c_str());
    } else if (flag == "--group-half-life") {
      base.group_half_life = std::strtod(value.c_str(), nullptr);
    } else if (flag == "--queue") {
      queue = value == "1";
    } else if (flag == "--churn") {
      base.churn_arrivals = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "flags take a value: --shape, --mix, --seed, --seeds, --load, --churn, --group-half-life, --queue\n");
    return 2;
  }
  for (const std::string& shape : shapes) {
    for (const std::string& mix : mixes) {
      topofit::bench::GroupReplayOptions o = base;
      o.shape = shape;
      o.mix = mix;
      if (queue) {
        auto rows = topofit::bench::RunGroupQueue(o);
        if (!rows.ok()) {
          std::fprintf(stderr, "%s\n", rows.error().c_str());
          return 1;
        }
        std::printf("%s\n", topofit::bench::FormatGroupQueue(o, *rows).c_str());
        continue;
      }
      auto rows = topofit::bench::RunGroupReplay(o);
      if (!rows.ok()) {
        std::fprintf(stderr, "%s\n", rows.error().c_str());
        return 1;
      }
      std::printf("%s\n", topofit::bench::FormatGroupReplay(o, *rows).c_str());
    }
  }
  return 0;
}
