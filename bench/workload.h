#pragma once
// Workload: the nodes and pods a bench run replays, independent of where they came from (openb CSV,
// a recorded `topofit serve` trace, the synthetic generator).
//
// Plain data. Units: CPU in millicores, memory in MiB, GPUs whole. A pod's `gpus` is what topofit
// schedules: a GPU-sharing pod of the openb trace (gpu_milli < 1000) already asks for one whole GPU
// here; `gpu_milli` keeps the trace's original figure for reference. Times are seconds; a pod with no
// deletion_time never departs. A node whose GPUs are shared carries the GPU Feature Discovery labels that
// say so (`labels`) and counts its advertised devices in `gpus` (what kube-scheduler sees); `profile` is
// then its physical GPUs' topology (docs/shared-gpus.md).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace topofit::bench {

struct NodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;    // GPU model as the trace names it ("V100M16", "G2"); empty for CPU-only nodes.
  std::string profile;  // Topology profile; empty means "look the model up in the GPU model map".
  std::map<std::string, std::string> labels = {};  // GFD labels of a node whose GPUs are shared; empty otherwise.
};

struct PodSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;                          // Whole GPUs asked for.
  int gpu_milli = 0;                     // The trace's per-GPU share (1000 = whole), for reference.
  std::vector<std::string> gpu_models;   // gpu_spec: allowed models; empty = any model.
  bool packed = false;  // topofit.io/replica-placement: packed (replicas of one GPU are fine).
  int64_t creation_time = 0;
  std::optional<int64_t> deletion_time;
};

struct Workload {
  std::vector<NodeSpec> nodes;
  std::vector<PodSpec> pods;
};

}  // namespace topofit::bench
