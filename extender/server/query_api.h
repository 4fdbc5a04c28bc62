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
//   GET  /api/v1/groups                  every group of pods seen (group_query.cc): what it asks, members
//                                        seen and bound, state (waiting, planned, bound), domain, reason,
//                                        seconds waiting
//   POST /api/v1/explain                 a pod (JSON or YAML) -> per node pass/fail and reason, best
//                                        set and predicted bandwidth, score and its parts; for a group
//                                        member also "group": every domain's verdict, the plan or why
//                                        not. Read-only.
// Errors: 404 for unknown names and domains, 400 for bodies that do not decode and a limit that is no
// count, each with {"error": "..."}.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "extender/groups/group_coordinator.h"
#include "extender/groups/network_domains.h"
#include "extender/server/cluster_overview.h"
#include "extender/placement/pipeline.h"
#include "extender/server/reply.h"

namespace topofit::server {

class QueryApi {
 public:
  // groups may be null (no group is known then). `levels`: the network domains the overview draws
  // (groups/network_domains.h); the coordinator's levels when there is one.
  explicit QueryApi(const placement::Pipeline* pipeline, const groups::GroupCoordinator* groups = nullptr,
                    groups::DomainLevels levels = groups::DomainLevels::Defaults())
      : pipeline_(pipeline), groups_(groups), levels_(std::move(levels)) {}

  Reply Nodes() const;
  Reply Node(std::string_view name) const;
  Reply Overview(std::string_view known_layout) const;
  // `limit`: "" for no limit, else a count.
  Reply UiNodes(std::string_view domain = {}, std::string_view limit = {}) const;
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
  groups::DomainLevels levels_;
  mutable OverviewLayouts layouts_;  // The overview's last layout, for the next poll (cluster_overview.h).
};

}  // namespace topofit::server
