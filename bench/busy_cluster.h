#pragma once
// The 5,000-node clusters the latency benches share: EC2-style node names and the pods that make a
// cluster busy. extender_loadgen serves them over HTTP; pipeline_bench runs the model on them alone.

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "extender/k8s/objects.h"

namespace topofit::bench {

// As EC2 names nodes (27 bytes): 5,000 of them make the ~150 KB filter body issue 3 quotes, and they
// are too long for std::string's inline buffer, as real names are.
inline std::string Ec2NodeName(int i) { return fmt::format("ip-10-0-{}-{}.ec2.internal", 100 + i / 256, 100 + i % 256); }

// A bound pod on 7 of every 8 of `nodes` (8 GPUs each) holding random GPUs, CPU and memory, as a
// cluster in use looks: nearly every node in a state of its own, a few failing a 2-GPU pod.
inline std::vector<k8s::PodObject> BusyPods(const std::vector<std::string>& nodes, unsigned seed = 42) {
  std::mt19937 rng(seed);
  std::vector<k8s::PodObject> pods;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i % 8 == 0) continue;
    std::string ids;
    int gpus = 0;
    for (int g = 0; g < 8; ++g)
      if (rng() % 2) ids += (ids.empty() ? "" : ",") + std::to_string(g), ++gpus;
    if (gpus == 0) continue;
    k8s::PodObject& p = pods.emplace_back();
    p.meta.uid = fmt::format("busy-{}", i);
    p.meta.name = p.meta.uid;
    p.meta.namespace_ = "busy";
    p.meta.annotations[k8s::kGpuIdsAnnotation] = ids;
    p.gpus = gpus;
    p.cpu_milli = int64_t(rng() % 64) * 1000;
    p.memory_bytes = int64_t(rng() % 512) << 30;
    p.node_name = nodes[i];
    p.phase = "Running";
  }
  return pods;
}

}  // namespace topofit::bench
