// The exchange rate between a multi-GPU pod's ring and fragmentation (scoring.interconnectRate,
// pipeline_config.h): the case - a 2-GPU pod that would break the only whole NVSwitch node an
// 8-GPU pod of the workload needs, or fill a PCIe node's last free pair at a slower ring.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/explain.h"
#include "extender/placement/pipeline.h"
#include "extender/placement/testing/scores.h"

namespace topofit::placement {
namespace {

using cluster::testing::AddNode;
using cluster::testing::MakePod;

constexpr double kInf = std::numeric_limits<double>::infinity();

// nvswitch: an HGX A100 8-GPU node, all free; pcie: a PCIe 8-GPU node with GPUs 2-7 taken (a pair
// free). The workload: 8-GPU and 2-GPU pods, one of each for every two.
struct Case {
  cluster::ClusterModel model;
  std::vector<std::string> names{"nvswitch", "pcie"};
  Case() {
    AddNode(model, "nvswitch", 8, "hgx-a100-8", 96, 1024);
    AddNode(model, "pcie", 8, "pcie-8-dual-socket", 96, 1024);
    model.ApplyPod(MakePod("held", 6, "pcie", "2,3,4,5,6,7"));
  }
  Explanation Run(double rate) {
    PipelineConfig config;
    config.interconnect_rate = rate;
    Pipeline pipeline(&model, config);
    for (int i = 0; i < 4; ++i) {
      pipeline.workload().Observe(cluster::testing::Request("eight" + std::to_string(i), 8));
      pipeline.workload().Observe(cluster::testing::Request("two" + std::to_string(i), 2));
    }
    return Explain(pipeline, cluster::testing::Request("new", 2), names);
  }
};

const NodeExplanation& Node(const Explanation& e, const std::string& name) {
  for (const auto& n : e.nodes)
    if (n.node == name) return n;
  FAIL("no node " << name);
  return e.nodes.front();
}

TEST_CASE("interconnect rate: the trade decides, and explain shows both sides of it") {
  Case c;
  // .inf: best ring of the cluster first (today's rule): the NVSwitch node, whatever it costs.
  Explanation lex = c.Run(kInf);
  REQUIRE(lex.chosen.has_value());
  CHECK(*lex.chosen == "nvswitch");
  const NodeExplanation& slow = Node(lex, "pcie");
  REQUIRE(slow.trade.has_value());
  CHECK(std::isinf(slow.trade->interconnect_gpus));
  CHECK(Node(lex, "nvswitch").trade->interconnect_gpus == 0);
  // 0: fragmentation alone: the PCIe pair (frag falls there; the 8-GPU pods lose the NVSwitch node).
  Explanation frag = c.Run(0);
  REQUIRE(frag.chosen.has_value());
  CHECK(*frag.chosen == "pcie");
  const double nv_frag = Node(frag, "nvswitch").trade->fragmentation_gpus;
  const double pcie_frag = Node(frag, "pcie").trade->fragmentation_gpus;
  CHECK(nv_frag > pcie_frag);
  // The price is R k (1 - x), x = the PCIe pair's ring / the NVSwitch pair's.
  const NodeExplanation& pcie = Node(frag, "pcie");
  const double x = pcie.bandwidth_gbps / Node(frag, "nvswitch").bandwidth_gbps;
  CHECK(x < 0.2);
  Explanation one = c.Run(1);
  CHECK(Node(one, "pcie").trade->interconnect_gpus == doctest::Approx(1 * 2 * (1 - x)).epsilon(1e-3));
  // The switch-over: below (nv_frag - pcie_frag) / (2 (1 - x)) the PCIe pair, above it the NVSwitch node.
  const double even = (nv_frag - pcie_frag) / (2 * (1 - x));
  CHECK(*c.Run(even * 0.9).chosen == "pcie");
  CHECK(*c.Run(even * 1.1).chosen == "nvswitch");
  // Wherever it lands, the pod gets the best set of that node (the Placer's), and the rate changes
  // no set: the same on every node at every rate.
  for (double rate : {0.0, even * 0.9, even * 1.1, kInf}) {
    Explanation e = c.Run(rate);
    for (const auto& n : e.nodes) {
      CHECK(n.set == Node(lex, n.node).set);
      CHECK(n.bandwidth_gbps == Node(lex, n.node).bandwidth_gbps);
    }
  }
}

TEST_CASE("interconnect rate: required and min-link stay hard, 1-GPU pods pay nothing") {
  Case c;
  PipelineConfig config;
  config.interconnect_rate = 0;
  Pipeline pipeline(&c.model, config);
  for (int i = 0; i < 4; ++i) pipeline.workload().Observe(cluster::testing::Request("eight" + std::to_string(i), 8));
  // A `required` pod with min-link NVLink: the PCIe node fails the filter at any rate.
  auto required = cluster::testing::Request(
      "req", 2, {{"topofit.io/topology-policy", "required"}, {"topofit.io/min-link", "NV"}});
  Explanation e = Explain(pipeline, required, c.names);
  REQUIRE(e.chosen.has_value());
  CHECK(*e.chosen == "nvswitch");
  CHECK(Node(e, "pcie").code != FilterCode::kPass);
  // A 1-GPU pod: no price on any node.
  Explanation single = Explain(pipeline, cluster::testing::Request("one", 1), c.names);
  for (const auto& n : single.nodes) {
    REQUIRE(n.trade.has_value());
    CHECK(n.trade->interconnect_gpus == 0);
  }
}

}  // namespace
}  // namespace topofit::placement
