#pragma once
// ClusterOverview: the model's nodes placed in the network domains of their labels
// (groups/domain_overview.h: nested domains, natural order, unlabelled nodes one domain per parent) -
// what GET /api/v1/overview sends the web view every poll, and which nodes GET /api/v1/ui/nodes?domain=
// draws in full when a person drills into a domain.
//
// The overview's JSON is a few bytes per node (measured in docs/ui.md: under 200 KB for 5,000 nodes):
//   {"layout": KEY, "levels": [drawn level names, broadest first],
//    "nodes": [names, in the overview's order],
//    "domains": [[depth, name (null: no label at that level), first, count], ... in pre-order],
//    "gpus": [GPUs per node], "free": [free GPUs per node], "states": "one character per node"}
// Names and domains are sent once: KEY stands for them (the drawn levels, the names in order and the
// domains), and a request that already knows KEY (?layout=KEY) gets "unchanged": true in their place.
// A node's state character: 'n' no GPUs, 'w' warnings (topology, conflicts: GET /api/v1/nodes/NAME),
// 'x' GPUs held outside topofit, unhealthy or unusable (GET /api/v1/nodes/NAME's gpuStates), '.' none of
// these; the first that applies, in that order.
// The layout (the map, the overview, its key) depends only on the nodes' names and the levels' labels:
// an OverviewLayouts keeps the last one, and a request whose names and labels are those same bytes
// reuses it instead of building it again (nodes join, leave and are relabelled rarely: most polls do).
// Not errors: no node, no drawn level (no domain). An unknown domain path is a NotFound for the caller
// to word. ClusterOverview is a value built per request from a copy of the model's nodes, not shared
// between threads; OverviewLayouts is thread-safe, and the layouts it hands out are immutable.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/cluster/model_views.h"
#include "extender/groups/domain_overview.h"

namespace topofit::server {

struct OverviewLayout {
  std::string source;  // The names and the levels' labels it was built from, as bytes.
  groups::DomainMap map;
  groups::DomainOverview overview;
  std::string key;
};

// The last layout built, for the next request to reuse.
class OverviewLayouts {
 public:
  // The layout of `source` (see OverviewLayout::source); `build` makes it when the last one differs.
  template <typename Build>
  std::shared_ptr<const OverviewLayout> Get(const std::string& source, Build&& build) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (last_ && last_->source == source) return last_;
    }
    std::shared_ptr<const OverviewLayout> made = build();
    std::lock_guard<std::mutex> lock(mu_);
    last_ = made;
    return made;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const OverviewLayout> last_;
};

class ClusterOverview {
 public:
  // `layouts`: where the last layout is kept and reused; nullptr builds it every time.
  ClusterOverview(std::vector<cluster::NodeInfo> nodes, const groups::DomainLevels& levels,
                  OverviewLayouts* layouts = nullptr);

  const groups::DomainOverview& overview() const { return layout_->overview; }
  // GET /api/v1/overview's body; names and domains left out when `known_layout` is this layout's key.
  std::string Json(std::string_view known_layout) const;
  const std::string& layout_key() const { return layout_->key; }
  // The nodes of the domain at `path` ("" = every node), in the overview's order; an error naming the
  // path when no domain has it.
  Result<std::vector<const cluster::NodeInfo*>> NodesOf(std::string_view path) const;

 private:
  const cluster::NodeInfo& info(size_t position) const { return nodes_[info_of_[overview().order[position]]]; }
  std::vector<cluster::NodeInfo> nodes_;
  std::shared_ptr<const OverviewLayout> layout_;
  std::vector<size_t> info_of_;  // DomainMap index -> index into nodes_.
};

// A node's state character (see above).
char OverviewState(const cluster::NodeInfo& node);

}  // namespace topofit::server
