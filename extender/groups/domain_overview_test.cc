#include "extender/groups/domain_overview.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace topofit::groups {
namespace {

constexpr const char* kSpine = "network.topology.nvidia.com/spine";
constexpr const char* kBlock = "network.topology.nvidia.com/block";
constexpr const char* kHostname = "kubernetes.io/hostname";

NodeLabels Node(const std::string& name, std::map<std::string, std::string> labels) {
  labels[kHostname] = name;  // As kubelet sets it: the host level is used, one node per domain.
  return {name, std::move(labels)};
}

std::vector<std::string> Names(const DomainMap& map, const DomainOverview& o, const OverviewDomain& d) {
  std::vector<std::string> out;
  for (uint32_t i = d.first; i < d.first + d.count; ++i) out.push_back(map.name(o.order[i]));
  return out;
}

TEST_CASE("domain overview: spines and blocks nest in natural order, and the host level is not drawn") {
  std::vector<NodeLabels> nodes;
  for (int i : {10, 2, 1, 100, 0}) nodes.push_back(Node(fmt::format("gpu-node-{}", i), {{kSpine, "s10"}, {kBlock, "b2"}}));
  for (int i : {11, 3}) nodes.push_back(Node(fmt::format("gpu-node-{}", i), {{kSpine, "s10"}, {kBlock, "b10"}}));
  for (int i : {20, 9}) nodes.push_back(Node(fmt::format("gpu-node-{}", i), {{kSpine, "s9"}, {kBlock, "b1"}}));
  DomainMap map = DomainMap::Build(DomainLevels::Defaults(), nodes);
  DomainOverview o = DomainOverview::Build(map);
  // spine and block (levels 1, 2); neither the unlabelled datacenter nor the one-node hosts.
  CHECK(o.levels == std::vector<int>{1, 2});
  REQUIRE(o.domains.size() == 5);
  // Pre-order: s9, its b1, then s10, its b2 and b10 (natural: 9 < 10, 2 < 10).
  CHECK(o.domains[0].name == "s9");
  CHECK(o.domains[1].name == "b1");
  CHECK(o.domains[1].parent == 0);
  CHECK(o.domains[2].name == "s10");
  CHECK(o.domains[3].name == "b2");
  CHECK(o.domains[4].name == "b10");
  CHECK(o.domains[4].parent == 2);
  CHECK(o.domains[4].depth == 1);
  CHECK(Names(map, o, o.domains[0]) == std::vector<std::string>{"gpu-node-9", "gpu-node-20"});
  CHECK(Names(map, o, o.domains[3]) ==
        std::vector<std::string>{"gpu-node-0", "gpu-node-1", "gpu-node-2", "gpu-node-10", "gpu-node-100"});
  CHECK(Names(map, o, o.domains[2]).size() == 7);  // A spine holds its blocks' nodes.
  CHECK(o.Path(4) == "s10/b10");
  CHECK(o.Find("s10/b10") == 4);
  CHECK(o.Find("s9") == 0);
  CHECK(o.Find("s9/b2") == std::nullopt);
  CHECK(o.Find("") == std::nullopt);
  CHECK(o.Find("s10/b10/x") == std::nullopt);
}

TEST_CASE("domain overview: nodes without a level's labels are one domain of their own under each parent, last") {
  std::vector<NodeLabels> nodes = {
      Node("n1", {{kSpine, "s1"}, {kBlock, "b1"}}), Node("n2", {{kSpine, "s1"}, {kBlock, "b1"}}),
      Node("n3", {{kSpine, "s1"}}),                 Node("n4", {{kSpine, "s1"}}),
      Node("n5", {}),                               Node("n6", {{kBlock, "b7"}}),
      Node("n7", {{kBlock, "b7"}}),
  };
  DomainMap map = DomainMap::Build(DomainLevels::Defaults(), nodes);
  DomainOverview o = DomainOverview::Build(map);
  CHECK(o.levels == std::vector<int>{1, 2});
  std::vector<std::string> paths;
  for (size_t d = 0; d < o.domains.size(); ++d) paths.push_back(o.Path(d) + ":" + std::to_string(o.domains[d].count));
  // s1 = {b1: n1 n2, no block: n3 n4}; no spine = {b7: n6 n7, no block: n5}.
  CHECK(paths == std::vector<std::string>{"s1:4", "s1/b1:2", "s1/-:2", "-:3", "-/b7:2", "-/-:1"});
  CHECK(o.domains[2].missing);
  CHECK(o.domains[2].name.empty());
  CHECK(o.domains[3].missing);
  CHECK(Names(map, o, o.domains[2]) == std::vector<std::string>{"n3", "n4"});
  CHECK(Names(map, o, o.domains[5]) == std::vector<std::string>{"n5"});
  CHECK(o.Find("-/b7") == 4);
  CHECK(o.Find("s1/-") == 2);
}

TEST_CASE("domain overview: no drawn level - every node, natural order, no domain, and an empty map") {
  std::vector<NodeLabels> nodes;
  for (std::string n : {"b-10", "b-9", "a-1", "b-09"}) nodes.push_back(Node(n, {}));
  // One rack per node: a level whose every domain is one node is not drawn.
  nodes[0].labels[kBlock] = "r1";
  DomainMap map = DomainMap::Build(DomainLevels::Defaults(), nodes);
  DomainOverview o = DomainOverview::Build(map);
  CHECK(o.levels.empty());
  CHECK(o.domains.empty());
  std::vector<std::string> names;
  for (size_t i : o.order) names.push_back(map.name(i));
  CHECK(names == std::vector<std::string>{"a-1", "b-09", "b-9", "b-10"});
  DomainOverview empty = DomainOverview::Build(DomainMap::Build(DomainLevels::Defaults(), {}));
  CHECK(empty.order.empty());
  CHECK(empty.domains.empty());
  CHECK(empty.levels.empty());
}

TEST_CASE("domain overview: two blocks of one name under two spines are two domains, as the planner sees them") {
  std::vector<NodeLabels> nodes = {Node("a", {{kSpine, "s1"}, {kBlock, "b1"}}), Node("b", {{kSpine, "s1"}, {kBlock, "b1"}}),
                                   Node("c", {{kSpine, "s2"}, {kBlock, "b1"}}), Node("d", {{kSpine, "s2"}, {kBlock, "b1"}})};
  DomainMap map = DomainMap::Build(DomainLevels::Defaults(), nodes);
  DomainOverview o = DomainOverview::Build(map);
  REQUIRE(o.domains.size() == 4);
  CHECK(o.Path(1) == "s1/b1");
  CHECK(o.Path(3) == "s2/b1");
  CHECK(Names(map, o, o.domains[3]) == std::vector<std::string>{"c", "d"});
  // The count and nesting hold for every domain: children tile their parent's run exactly.
  for (size_t d = 0; d < o.domains.size(); ++d) {
    uint32_t children = 0, next = o.domains[d].first;
    for (size_t c = 0; c < o.domains.size(); ++c) {
      if (o.domains[c].parent != static_cast<int>(d)) continue;
      CHECK(o.domains[c].first == next);
      next += o.domains[c].count;
      children += o.domains[c].count;
    }
    if (o.domains[d].depth + 1 < static_cast<int>(o.levels.size())) CHECK(children == o.domains[d].count);
  }
}

}  // namespace
}  // namespace topofit::groups
