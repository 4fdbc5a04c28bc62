#pragma once
// DomainOverview: the cluster as a person looks at it - the network domains of a DomainMap as nested
// boxes, broadest first, each holding its nodes, every list in natural order (gpu-node-2 before
// gpu-node-10, rack-9 before rack-10; base/strings.h NaturalLess). What the web view's overview draws
// (GET /api/v1/overview) and what its drill-down selects (GET /api/v1/ui/nodes?domain=PATH).
//
// Drawn levels: the levels of the map that some node carries (DomainMap::used) and at which some
// domain holds two nodes or more. A level whose every domain is one node - the host level,
// kubernetes.io/hostname - is not drawn: a node is drawn as itself already.
// Nodes without a drawn level's labels are, under each parent, ONE domain of their own (missing, name
// ""), after the labelled ones. The planner instead makes each such node a domain of one node
// (network_domains.h); for people, one box "no block label" says that, where a box per node would not.
// Order: nodes by their domain at every drawn level (natural order of the values, missing last), then
// by name (natural order); so each domain's nodes are one run of `order`. Domains are listed in
// pre-order: a domain, then its children, each child after its parent.
// A domain's path: the names from the broadest drawn level down to it, joined by '/', with "-" for a
// missing one ("s1/b2", "s1/-"). Label values contain neither '/' nor a lone "-" (Kubernetes forbids
// both), so a path names one domain; a value that breaks the rule still gets a path, which may then
// name the first of two domains. A broadest domain whose value is "" has the path "", which names the
// whole cluster instead (Find("") finds no domain).
// Not errors: an empty map (no node, no domain), a map with no drawn level (no domain: the UI draws
// the cluster as one box). Pure; a value, immutable once built (thread-safe to read).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/groups/network_domains.h"

namespace topofit::groups {

struct OverviewDomain {
  int depth = 0;         // Index into DomainOverview::levels: 0 is the broadest drawn level.
  int parent = -1;       // Index into DomainOverview::domains; -1 at depth 0.
  std::string name;      // The label's value; "" when missing.
  bool missing = false;  // The nodes carry no key of the level (one domain per parent, see above).
  uint32_t first = 0;    // Its nodes are order[first, first + count).
  uint32_t count = 0;
};

struct DomainOverview {
  std::vector<int> levels;               // The drawn levels, broadest first: indices into DomainLevels.
  std::vector<size_t> order;             // Every node of the map (DomainMap index), in the order above.
  std::vector<OverviewDomain> domains;   // Pre-order.

  static DomainOverview Build(const DomainMap& map);
  // "s1/b2": see above.
  std::string Path(size_t domain) const;
  // The domain whose path is `path`; nullopt when none (and for "": the whole cluster is no domain).
  std::optional<size_t> Find(std::string_view path) const;
};

}  // namespace topofit::groups
