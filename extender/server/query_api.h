#pragma once
// QueryApi: the read-only REST endpoints for people and tools, JSON out (nlohmann: not a hot path).
//   GET  /api/v1/nodes                   every node: GPUs, free, topology source, free sets by shape
//   GET  /api/v1/nodes/{name}            one node: its link matrix, which pod holds which GPU
//   GET  /api/v1/pods/{namespace}/{name} one pod's GPUs
//   GET  /api/v1/ui/nodes                every node in full (as /api/v1/nodes/{name}), for the web view
//   GET  /api/v1/workload                the running estimate of the GPU pods seen (workload_estimate.h):
//                                        shapes with their share, what FragmentationGradient scores by
//   GET  /api/v1/groups                  every group of pods seen (group_query.cc): what it asks, members
//                                        seen and bound, state (waiting, planned, bound), domain, reason,
//                                        seconds waiting
//   POST /api/v1/explain                 a pod (JSON or YAML) -> per node pass/fail and reason, best
//                                        set and predicted bandwidth, score and its parts; for a group
//                                        member also "group": every domain's verdict, the plan or why
//                                        not. Read-only.
// Errors: 404 for unknown names, 400 for bodies that do not decode, each with {"error": "..."}.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "extender/groups/group_coordinator.h"
#include "extender/placement/pipeline.h"
#include "extender/server/reply.h"

namespace topofit::server {

class QueryApi {
 public:
  // groups may be null (no group is known then).
  explicit QueryApi(const placement::Pipeline* pipeline, const groups::GroupCoordinator* groups = nullptr)
      : pipeline_(pipeline), groups_(groups) {}

  Reply Nodes() const;
  Reply Node(std::string_view name) const;
  Reply UiNodes() const;
  Reply Pod(std::string_view namespace_, std::string_view name) const;
  Reply Workload() const;
  Reply Groups() const;
  // The model-bound demand against the free GPUs now, as FragmentationGradient weighs it (GET
  // /api/v1/workload's gpuModels, and /metrics).
  placement::ProductShortfall Shortfall() const;
  // `nodes`: comma-separated names to restrict to ("" = all).
  Reply Explain(std::string_view body, std::string_view nodes = {}) const;

 private:
  // For a group member, explain's "group" (group_query.cc); null otherwise.
  nlohmann::json GroupExplain(const cluster::PodRequest& pod) const;

  const placement::Pipeline* pipeline_;
  const groups::GroupCoordinator* groups_;
};

}  // namespace topofit::server
