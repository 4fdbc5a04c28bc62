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
  // EKS: network node layers top down (a 4-layer type's layer 4 is tried before layer 3), and the
  // UltraServer's NVLink domain.
  CHECK(d.Find("topology.k8s.aws/network-node-layer-4") == 2);
  CHECK(d.Find("topology.k8s.aws/ultraserver-id") == 3);
  // CoreWeave: fabric, superpod, leaf group (the backend fabric's labels and the older InfiniBand
  // ones), and the NVL72 rack.
  CHECK(d.Find("backend.coreweave.cloud/fabric") == 0);
  CHECK(d.Find("ib.coreweave.cloud/fabric") == 0);
  CHECK(d.Find("ib.coreweave.cloud/superpod") == 1);
  CHECK(d.Find("backend.coreweave.cloud/leafgroup") == 2);
  CHECK(d.Find("ib.coreweave.cloud/leafgroup") == 2);
  CHECK(d.Find("ds.coreweave.com/nvlink.domain") == 3);
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

TEST_CASE("network domains: EKS nodes of three and of four network layers, and UltraServers") {
  // cloud-provider-aws labels layer 1 as the top of the node set EC2's DescribeInstanceTopology gives
  // (top down), so the highest layer a node carries is its closest switch: 3 or 4 by instance type.
  auto node = [](const std::string& name, std::vector<std::string> layers, const std::string& ultraserver) {
    std::map<std::string, std::string> labels{{kHostname, name}};
    for (size_t i = 0; i < layers.size(); ++i)
      labels["topology.k8s.aws/network-node-layer-" + std::to_string(i + 1)] = layers[i];
    if (!ultraserver.empty()) labels["topology.k8s.aws/ultraserver-id"] = ultraserver;
    return MakeNode(name, 4, "hgx-h100-8", labels);
  };
  const DomainMap m = DomainMap::Build(DomainLevels::Defaults(),
                                       {{"p5-a", node("p5-a", {"nn-1", "nn-2", "nn-3"}, "").meta.labels},
                                        {"p5-b", node("p5-b", {"nn-1", "nn-2", "nn-4"}, "").meta.labels},
                                        {"gb-a", node("gb-a", {"nn-1", "nn-5", "nn-6", "nn-7"}, "us-1").meta.labels},
                                        {"gb-b", node("gb-b", {"nn-1", "nn-5", "nn-6", "nn-7"}, "us-2").meta.labels},
                                        {"gb-c", node("gb-c", {"nn-1", "nn-5", "nn-6", "nn-8"}, "us-2").meta.labels}});
  const int spine = 1, block = 2, accel = 3;
  auto at = [&](const char* name) { return static_cast<int>(*m.Find(name)); };  // Kept sorted by name.
  CHECK(m.domain_of(at("p5-a"), block).value == "nn-3");
  CHECK(m.domain_of(at("gb-a"), block).value == "nn-7");  // Layer 4, not layer 3.
  CHECK(m.domain_of(at("gb-c"), block).value == "nn-8");
  CHECK(m.id(at("gb-a"), block) == m.id(at("gb-b"), block));
  CHECK(m.id(at("p5-a"), block) != m.id(at("p5-b"), block));
  CHECK(m.id(at("p5-a"), spine) != m.id(at("gb-a"), spine));
  CHECK(m.domain_of(at("gb-a"), accel).value == "us-1");
  CHECK(m.id(at("gb-b"), accel) != m.id(at("gb-a"), accel));
  CHECK(m.domain_of(at("p5-a"), accel).missing);  // A p5 is in no UltraServer: a domain of its own.
}

TEST_CASE("network domains: CoreWeave's fabric, superpod and leaf group labels, and its NVL72 racks") {
  // Keys as CoreWeave's documentation lists them (InfiniBand and RoCE labels; topology scheduling).
  // The backend fabric's labels name no superpod: a level no node carries is left out of the paths.
  const DomainMap backend = DomainMap::Build(
      DomainLevels::Defaults(),
      {{"cw-1", {{"backend.coreweave.cloud/fabric", "us-east-02a"}, {"backend.coreweave.cloud/leafgroup", "lg7"},
                 {"ds.coreweave.com/nvlink.domain", "DH4-016-US-EAST-02A"}, {kHostname, "cw-1"}}},
       {"cw-2", {{"backend.coreweave.cloud/fabric", "us-east-02a"}, {"backend.coreweave.cloud/leafgroup", "lg7"},
                 {"ds.coreweave.com/nvlink.domain", "DH4-017-US-EAST-02A"}, {kHostname, "cw-2"}}},
       {"cw-3", {{"backend.coreweave.cloud/fabric", "us-east-02a"}, {"backend.coreweave.cloud/leafgroup", "lg8"},
                 {"ds.coreweave.com/nvlink.domain", "DH4-017-US-EAST-02A"}, {kHostname, "cw-3"}}}});
  const int datacenter = 0, spine = 1, block = 2, accel = 3;
  CHECK_FALSE(backend.used(spine));
  CHECK(backend.domain_count(datacenter) == 1);
  CHECK(backend.domain_count(block) == 2);
  CHECK(backend.id(0, block) == backend.id(1, block));
  CHECK(backend.domain_name(block, backend.id(0, block)) == "us-east-02a/lg7");
  CHECK(backend.id(0, accel) != backend.id(1, accel));
  CHECK(backend.domain_name(accel, backend.id(1, accel)) == "us-east-02a/lg7/DH4-017-US-EAST-02A");
  // The older InfiniBand labels: fabric, superpod, leaf group.
  const DomainMap ib = DomainMap::Build(
      DomainLevels::Defaults(),
      {{"ib-1", {{"ib.coreweave.cloud/fabric", "ib-a"}, {"ib.coreweave.cloud/superpod", "3"},
                 {"ib.coreweave.cloud/leafgroup", "12"}, {kHostname, "ib-1"}}},
       {"ib-2", {{"ib.coreweave.cloud/fabric", "ib-a"}, {"ib.coreweave.cloud/superpod", "4"},
                 {"ib.coreweave.cloud/leafgroup", "12"}, {kHostname, "ib-2"}}}});
  CHECK(ib.domain_name(block, ib.id(0, block)) == "ib-a/3/12");
  CHECK(ib.id(0, block) != ib.id(1, block));  // Leaf group 12 of superpod 3 is not that of superpod 4.
  CHECK(ib.id(0, spine) != ib.id(1, spine));
}

TEST_CASE("network domains: a name given twice keeps its last labels") {
  DomainMap m = DomainMap::Build(DomainLevels::Defaults(),
                                 {{"a", {{kBlock, "b1"}}}, {"a", {{kBlock, "b2"}}}});
  REQUIRE(m.size() == 1);
  CHECK(m.domain_of(0, 2).value == "b2");
}

}  // namespace
}  // namespace topofit::groups
