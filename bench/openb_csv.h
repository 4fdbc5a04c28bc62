#pragma once
// Readers for the Alibaba openb trace CSVs (cluster-trace-gpu-v2023, see traces/openb/README.md).
//
// Columns are found by header name, so the short pod lists (name,cpu_milli,memory_mib,num_gpu,
// gpu_milli) and the full ones (plus gpu_spec,qos,pod_phase,creation_time,deletion_time,...) both read.
// Node lists: sn,cpu_milli,memory_mib,gpu,model. Errors name the file line and column.
//
// Whole-GPU rule: topofit schedules whole GPUs, so a pod with num_gpu >= 1 asks for num_gpu GPUs,
// whatever its gpu_milli (a GPU-sharing pod with gpu_milli < 1000 asks for one whole GPU).

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "bench/workload.h"

namespace topofit::bench {

Result<std::vector<NodeSpec>> ParseOpenbNodes(std::string_view csv_text);
Result<std::vector<PodSpec>> ParseOpenbPods(std::string_view csv_text);

Result<std::vector<NodeSpec>> ReadOpenbNodes(const std::string& path);
Result<std::vector<PodSpec>> ReadOpenbPods(const std::string& path);

}  // namespace topofit::bench
