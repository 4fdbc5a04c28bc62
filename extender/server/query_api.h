#pragma once
// QueryApi: the read-only REST endpoints for people and tools, JSON out (nlohmann: not a hot path).
//   GET  /api/v1/nodes                   every node: GPUs, free, topology source, free sets by shape
//   GET  /api/v1/nodes/{name}            one node: its link matrix, which pod holds which GPU
//   GET  /api/v1/pods/{namespace}/{name} one pod's GPUs
//   GET  /api/v1/overview[?layout=KEY]   the cluster by network domain, a few bytes per node, for the web
//                                        view's overview (cluster_overview.h has the format)
//   GET  /api/v1/ui/nodes[?domain=PATH]  every node in full (as /api/v1/nodes/{name}) with its labels, or
//        [&limit=N]                      only those of one domain of the overview ("s1/b2"), at most N of
//                                        them; in the overview's order; "total": the nodes there
//   GET  /api/v1/workload                the running estimate of the GPU pods seen (workload_estimate.h):
//                                        shapes with their share, what FragmentationGradient scores by
//   POST /api/v1/explain                 a pod (JSON or YAML) -> per node pass/fail and reason, best
//                                        set and predicted bandwidth, score and its parts. Read-only.
// Errors: 404 for unknown names and domains, 400 for bodies that do not decode and a limit that is no
// count, each with {"error": "..."}.

#include <string>
#include <string_view>

#include "extender/groups/network_domains.h"
#include "extender/server/cluster_overview.h"
#include "extender/placement/pipeline.h"
#include "extender/server/reply.h"

namespace topofit::server {

class QueryApi {
 public:
  // `levels`: the network domains the overview draws (groups/network_domains.h).
  explicit QueryApi(const placement::Pipeline* pipeline, groups::DomainLevels levels = groups::DomainLevels::Defaults())
      : pipeline_(pipeline), levels_(std::move(levels)) {}

  Reply Nodes() const;
  Reply Node(std::string_view name) const;
  Reply Overview(std::string_view known_layout) const;
  // `limit`: "" for no limit, else a count.
  Reply UiNodes(std::string_view domain = {}, std::string_view limit = {}) const;
  Reply Pod(std::string_view namespace_, std::string_view name) const;
  Reply Workload() const;
  // The model-bound demand against the free GPUs now, as FragmentationGradient weighs it (GET
  // /api/v1/workload's gpuModels, and /metrics).
  placement::ProductShortfall Shortfall() const;
  // `nodes`: comma-separated names to restrict to ("" = all).
  Reply Explain(std::string_view body, std::string_view nodes = {}) const;

 private:
  const placement::Pipeline* pipeline_;
  groups::DomainLevels levels_;
  mutable OverviewLayouts layouts_;  // The overview's last layout, for the next poll (cluster_overview.h).
};

}  // namespace topofit::server
