#include "extender/groups/network_domains.h"

#include <doctest/doctest.h>

#include "extender/cluster/testing/builders.h"

namespace topofit::groups {
namespace {

using cluster::testing::MakeNode;

constexpr const char* kSpine = "network.topology.nvidia.com/spine";
constexpr const char* kBlock = "network.topology.nvidia.com/block";
constexpr const char* kLeaf = "network.topology.nvidia.com/leaf";
constexpr const char* kClique = "nvidia.com/gpu.clique";
constexpr const char* kHostname = "kubernetes.io/hostname";

NodeLabels Labels(const k8s::NodeObject& n) { return {n.meta.name, n.meta.labels}; }

TEST_CASE("network domains: the defaults, broadest first, each level with its keys in order") {
  DomainLevels d = DomainLevels::Defaults();
  REQUIRE(d.Validate().ok());
  REQUIRE(d.size() == 5);
  CHECK(d.levels[0].name == "datacenter");
  CHECK(d.levels[1].name == "spine");
  CHECK(d.levels[2].name == "block");
  CHECK(d.levels[3].name == "accelerator");
  CHECK(d.levels[4].name == "host");
  CHECK(d.levels[4].keys.back() == kHostname);  // hostname last
  CHECK(d.Find("block") == 2);
  CHECK(d.Find(kLeaf) == 2);                          // a key finds its level
  CHECK(d.Find("cloud.google.com/gce-topology-block") == 1);  // GKE's block is a spine-level domain
  CHECK(d.Find("topology.k8s.aws/network-node-layer-3") == 2);
  CHECK(d.Find(kClique) == 3);
  // topograph v1.x: fabric tiers from the node outwards, and its accelerator domain.
  CHECK(d.Find("fabric.topograph.run/tier-0") == 2);
  CHECK(d.Find("fabric.topograph.run/tier-1") == 1);
  CHECK(d.Find("fabric.topograph.run/tier-2") == 0);
  CHECK(d.Find("accelerator.topograph.run/domain") == 3);
  CHECK(d.levels[3].keys.front() == kClique);  // the GPU operator's clique before topograph's domain
  // OKE: OCI's RDMA latency bands, local block (tier 0), network block (tier 1), HPC island (tier 2).
  CHECK(d.Find("oci.oraclecloud.com/rdma.local_block_id") == 2);
  CHECK(d.Find("oci.oraclecloud.com/rdma.network_block_id") == 1);
  CHECK(d.Find("oci.oraclecloud.com/rdma.hpc_island_id") == 0);
  CHECK(d.Find("rack") == -1);
  CHECK(d.Find("Block") == -1);  // names and keys are case-sensitive
}

TEST_CASE("network domains: Validate rejects what cannot be a hierarchy, naming the level") {
  CHECK(DomainLevels{}.Validate().error() == "domain levels: none given");
  CHECK(DomainLevels{{{"", {"a"}}}}.Validate().error() == "domain level 1: no name");
  CHECK(DomainLevels{{{"rack", {}}}}.Validate().error() == "domain level 'rack': no label key");
  CHECK(DomainLevels{{{"rack", {"a"}}, {"rack", {"b"}}}}.Validate().error() == "domain level 'rack' is given twice");
  CHECK(DomainLevels{{{"rack", {"a", ""}}}}.Validate().error() == "domain level 'rack': an empty label key");
}

TEST_CASE("network domains: a level's keys are tried in order - a node without them is a domain of its own") {
  DomainLevels levels = DomainLevels::Defaults();
  auto both = MakeNode("n1", 8, "", {{kLeaf, "leaf-b"}, {kBlock, "blk-a"}, {kHostname, "n1"}});
  auto d = DomainsOf(both.meta.name, both.meta.labels, levels);
  REQUIRE(d.size() == 5);
  CHECK(d[2] == NodeDomain{"blk-a", kBlock, false});  // block is listed before leaf
  CHECK(d[4] == NodeDomain{"n1", kHostname, false});
  CHECK(d[0] == NodeDomain{"n1", "", true});  // no datacenter label: its own domain, flagged
  CHECK(d[3].missing);

  auto leaf_only = MakeNode("n2", 8, "", {{kLeaf, "leaf-b"}});
  CHECK(DomainsOf("n2", leaf_only.meta.labels, levels)[2] == NodeDomain{"leaf-b", kLeaf, false});
}

TEST_CASE("network domains: ids follow the path, so equal values under different parents differ") {
  DomainLevels levels = DomainLevels::Defaults();
  std::vector<NodeLabels> nodes = {
      Labels(MakeNode("c", 8, "", {{kSpine, "s2"}, {kBlock, "b1"}})),
      Labels(MakeNode("a", 8, "", {{kSpine, "s1"}, {kBlock, "b1"}})),
      Labels(MakeNode("b", 8, "", {{kSpine, "s1"}, {kBlock, "b1"}})),
      Labels(MakeNode("d", 8, "", {{kSpine, "s2"}, {kBlock, "b2"}})),
  };
  DomainMap m = DomainMap::Build(levels, nodes);
  REQUIRE(m.size() == 4);
  CHECK(m.name(0) == "a");  // sorted by name
  CHECK(m.name(3) == "d");
  CHECK(m.Find("c") == 2u);
  CHECK_FALSE(m.Find("e").has_value());
  const int spine = 1, block = 2;
  CHECK(m.used(spine));
  CHECK(m.used(block));
  CHECK_FALSE(m.used(0));  // datacenter: nobody carries it
  CHECK(m.domain_count(spine) == 2);
  CHECK(m.domain_count(block) == 3);  // s1/b1, s2/b1, s2/b2
  CHECK(m.id(0, block) == m.id(1, block));
  CHECK(m.id(0, block) != m.id(2, block));  // b1 under s1 is not b1 under s2
  CHECK(m.domain_name(block, m.id(2, block)) == "s2/b1");
  CHECK(m.domain_name(spine, m.id(3, spine)) == "s2");
  // An unused level above does not split anything: the datacenter level is not in the path.
  CHECK(m.domain_name(block, m.id(0, block)) == "s1/b1");
  // An unused level is still one domain per node when asked for.
  CHECK(m.domain_count(0) == 4);
  CHECK(m.missing_count(0) == 4);
  CHECK(m.missing_count(block) == 0);
}

TEST_CASE("network domains: a node missing a level is its own domain there and below it") {
  DomainLevels levels = DomainLevels::Defaults();
  std::vector<NodeLabels> nodes = {
      Labels(MakeNode("a", 8, "", {{kSpine, "s1"}, {kBlock, "b1"}})),
      Labels(MakeNode("b", 8, "", {{kBlock, "b1"}})),  // no spine label
      Labels(MakeNode("c", 8, "", {{kSpine, "s1"}, {kBlock, "b1"}})),
  };
  DomainMap m = DomainMap::Build(levels, nodes);
  const int spine = 1, block = 2;
  CHECK(m.domain_of(1, spine).missing);
  CHECK(m.missing_count(spine) == 1);
  CHECK(m.domain_count(spine) == 2);
  CHECK(m.id(0, block) == m.id(2, block));
  CHECK(m.id(1, block) != m.id(0, block));  // its block is its own: it hangs under no spine of the others
  CHECK(m.domain_name(block, m.id(1, block)) == "node:b/b1");
}

TEST_CASE("network domains: read from the model's nodes and their labels") {
  cluster::ClusterModel model;
  model.ApplyNode(MakeNode("g1", 8, "hgx-h100-8", {{kClique, "uuid.1"}, {kHostname, "g1"}}));
  model.ApplyNode(MakeNode("g2", 8, "hgx-h100-8", {{kClique, "uuid.1"}, {kHostname, "g2"}}));
  model.ApplyNode(MakeNode("g3", 8, "hgx-h100-8", {{kClique, "uuid.2"}, {kHostname, "g3"}}));
  DomainMap m = DomainMap::FromModel(model, DomainLevels::Defaults());
  REQUIRE(m.size() == 3);
  const int accel = 3, host = 4;
  CHECK(m.used(accel));
  CHECK(m.domain_count(accel) == 2);
  CHECK(m.id(0, accel) == m.id(1, accel));
  CHECK(m.domain_name(accel, m.id(2, accel)) == "uuid.2");
  CHECK(m.domain_count(host) == 3);
  CHECK(m.domain_name(host, m.id(0, host)) == "uuid.1/g1");
}

TEST_CASE("network domains: topograph v1.x's fabric tiers and accelerator domain, as its labeler writes them") {
  // Values as in topograph's own labeler test (pkg/engines/k8s/labeler_test.go): tier 0 the switch
  // closest to the node, a long switch name hashed to "x" + 16 hex digits.
  auto node = [](const std::string& name, const std::string& leaf, const std::string& domain) {
    return MakeNode(name, 8, "hgx-h100-8",
                    {{"fabric.topograph.run/tier-0", leaf}, {"fabric.topograph.run/tier-1", "S1"},
                     {"fabric.topograph.run/tier-2", "IB2"}, {"accelerator.topograph.run/domain", domain},
                     {kHostname, name}});
  };
  cluster::ClusterModel model;
  model.ApplyNode(node("Node201", "S2", "B1"));
  model.ApplyNode(node("Node202", "S2", "B1"));
  model.ApplyNode(node("Node304", "xf946c4acef2d5939", "B2"));
  const DomainMap m = DomainMap::FromModel(model, DomainLevels::Defaults());
  REQUIRE(m.size() == 3);
  const int datacenter = 0, spine = 1, block = 2, accel = 3;
  const int n201 = static_cast<int>(*m.Find("Node201")), n202 = static_cast<int>(*m.Find("Node202")),
            n304 = static_cast<int>(*m.Find("Node304"));
  CHECK(m.domain_count(datacenter) == 1);
  CHECK(m.domain_count(spine) == 1);
  CHECK(m.domain_name(spine, m.id(n201, spine)) == "IB2/S1");
  CHECK(m.domain_count(block) == 2);
  CHECK(m.id(n201, block) == m.id(n202, block));
  CHECK(m.domain_name(block, m.id(n304, block)) == "IB2/S1/xf946c4acef2d5939");
  CHECK(m.domain_name(accel, m.id(n201, accel)) == "IB2/S1/S2/B1");
  CHECK(m.id(n201, accel) != m.id(n304, accel));
}

TEST_CASE("network domains: a name given twice keeps its last labels") {
  DomainMap m = DomainMap::Build(DomainLevels::Defaults(),
                                 {{"a", {{kBlock, "b1"}}}, {"a", {{kBlock, "b2"}}}});
  REQUIRE(m.size() == 1);
  CHECK(m.domain_of(0, 2).value == "b2");
}

}  // namespace
}  // namespace topofit::groups
