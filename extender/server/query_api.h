#pragma once
// QueryApi: the read-only REST endpoints for people and tools, JSON out (nlohmann: not a hot path).
//   GET  /api/v1/nodes                   every node: GPUs, free, topology source, free sets by shape
//   GET  /api/v1/nodes/{name}            one node: its link matrix, which pod holds which GPU
//   GET  /api/v1/pods/{namespace}/{name} one pod's GPUs
//   GET  /api/v1/ui/nodes                every node in full (as /api/v1/nodes/{name}), for the web view
//   GET  /api/v1/workload                the running estimate of the GPU pods seen (workload_estimate.h):
//                                        shapes with their share, what FragmentationGradient scores by
//   POST /api/v1/explain                 a pod (JSON or YAML) -> per node pass/fail and reason, best
//                                        set and predicted bandwidth, score and its parts. Read-only.
// Errors: 404 for unknown names, 400 for bodies that do not decode, each with {"error": "..."}.

#include <string>
#include <string_view>

#include "extender/placement/pipeline.h"
#include "extender/server/reply.h"

namespace topofit::server {

class QueryApi {
 public:
  explicit QueryApi(const placement::Pipeline* pipeline) : pipeline_(pipeline) {}

  Reply Nodes() const;
  Reply Node(std::string_view name) const;
  Reply UiNodes() const;
  Reply Pod(std::string_view namespace_, std::string_view name) const;
  Reply Workload() const;
  // The model-bound demand against the free GPUs now, as FragmentationGradient weighs it (GET
  // /api/v1/workload's gpuModels, and /metrics).
  placement::ProductShortfall Shortfall() const;
  // `nodes`: comma-separated names to restrict to ("" = all).
  Reply Explain(std::string_view body, std::string_view nodes = {}) const;

 private:
  const placement::Pipeline* pipeline_;
};

}  // namespace topofit::server
