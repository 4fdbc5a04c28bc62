// Policies: the device plugin's set choice, kube-scheduler's and the paper's scores, topofit's pipeline.
#include <doctest/doctest.h>

#include <map>

#include "bench/device_plugin_alloc.h"
#include "bench/kube_policies.h"
#include "bench/paper_policies.h"
#include "bench/run_metrics.h"
#include "bench/sim_cluster.h"
#include "bench/topofit_policy.h"
#include "topology/profiles.h"

using namespace topofit;
using namespace topofit::bench;

namespace {

std::unique_ptr<SimCluster> Cluster(std::vector<NodeSpec> nodes) {
  auto map = GpuModelMap::Parse("", "");
  auto c = SimCluster::Build(std::move(nodes), *map);
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  return std::move(c).value();
}

NodeSpec Node(std::string name, std::string profile, int gpus, int64_t cpu = 96000, int64_t mem = 393216) {
  return NodeSpec{std::move(name), cpu, mem, gpus, profile, profile};
}

PodSpec Pod(std::string name, int gpus, int64_t cpu = 1000, int64_t mem = 1024) {
  PodSpec p;
  p.name = std::move(name);
  p.gpus = gpus;
  p.cpu_milli = cpu;
  p.memory_mib = mem;
  return p;
}

}  // namespace

TEST_CASE("device plugin: every split into groups of the request size, best total wins") {
  // GPUs 0-1 and 2-3 share a PCIe switch (PIX, 50 points); other pairs cross sockets (SYS, 10).
  PairMatrix m(4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) m.Set(a, b, Link{LinkClass::Sys, 0}, 10000);
  m.Set(0, 1, Link{LinkClass::Pix, 0}, 20000);
  m.Set(2, 3, Link{LinkClass::Pix, 0}, 20000);
  DevicePluginAllocator dp(m, {});
  CHECK(dp.PairScore(0, 1) == 50);
  CHECK(dp.SetScore(GpuSet::Of({0, 1, 2})) == 70);
  CHECK(*dp.Allocate(GpuSet::FirstN(4), 2) == GpuSet::Of({0, 1}));
  // Free {1,2,3} padded to [1,2,3,-]: the split {1,-},{2,3} scores 50, beating {1,2},{3,-} and {1,3},{2,-}.
  CHECK(*dp.Allocate(GpuSet::Of({1, 2, 3}), 2) == GpuSet::Of({2, 3}));
  // One GPU: the first free one.
  CHECK(*dp.Allocate(GpuSet::Of({2, 3}), 1) == GpuSet::Of({2}));
  CHECK_FALSE(dp.Allocate(GpuSet::Of({2}), 2).has_value());
}

TEST_CASE("device plugin on a DGX-1: NV2 pairs and the fully meshed quads") {
  auto topo = Topology::Build(*ProfileMatrix("dgx1-v100"));
  REQUIRE(topo.ok());
  DevicePluginAllocator dp(**topo);
  CHECK(dp.PairScore(0, 3) >= 200);  // NV2 plus its PCIe path
  CHECK(dp.PairScore(0, 1) < 200);   // NV1
  CHECK(dp.PairScore(0, 5) == 10);   // SYS
  CHECK(*dp.Allocate(GpuSet::FirstN(8), 2) == GpuSet::Of({0, 3}));
  CHECK(*dp.Allocate(GpuSet::FirstN(8), 4) == GpuSet::Of({0, 1, 2, 3}));
  CHECK(*dp.Allocate(GpuSet::FirstN(8), 8) == GpuSet::FirstN(8));
}

TEST_CASE("kube-scheduler scores, integer arithmetic as upstream") {
  auto c = Cluster({Node("n", "generic-pcie-4", 4, 10000, 10000)});
  const SimNode& n = c->node(0);
  PodSpec p = Pod("p", 1, 5000, 2500);
  CHECK(LeastAllocatedScore(n, p) == (50 + 75) / 2);
  CHECK(MostAllocatedScore(n, p) == (50 + 25 + 25) / 3);
  CHECK(BalancedAllocationScore(n, p) == 87);  // 100 * (1 - |0.5 - 0.25| / 2) = 87.5
}

TEST_CASE("paper baselines: best fit prefers the tighter node, packing prefers used nodes") {
  auto c = Cluster({Node("big", "generic-pcie-8", 8, 128000), Node("small", "generic-pcie-2", 2, 16000)});
  PodSpec p = Pod("p", 1, 4000);
  CHECK(BestFitScore(c->node(1), p) > BestFitScore(c->node(0), p));
  CHECK(GpuPackingScore(c->node(0), p) == 25);  // untouched node: 33 - 8
  c->Bind(0, Pod("x", 1), GpuSet::Of({0}));
  CHECK(GpuPackingScore(c->node(0), p) == 49);  // used node: 50 - 1
  CHECK(GpuPackingScore(c->node(0), Pod("cpu", 0)) == 0);
  CHECK(DotProdScore(c->node(1), p) > DotProdScore(c->node(0), p));
}

TEST_CASE("topofit runs E1's pipeline: a 4-GPU pod gets an NVLink quad, the best set in the cluster") {
  auto c = Cluster({Node("pcie", "pcie-8-dual-socket", 8), Node("dgx", "dgx1-v100", 8)});
  auto policy = MakeTopofitPolicy(PolicyOptions{});
  REQUIRE(policy->Reset(*c, 42).ok());
  RunMetrics m;
  RecordingReplayer replay(c.get(), policy.get(), &m);
  Placement p = replay.Arrive(Pod("train", 4));
  REQUIRE(p.ok());
  CHECK(p.node == 1);
  CHECK((p.gpus == GpuSet::Of({0, 1, 2, 3}) || p.gpus == GpuSet::Of({4, 5, 6, 7})));
  REQUIRE(m.multi.size() == 1);
  CHECK(m.multi[0].bandwidth_gbps == doctest::Approx(m.multi[0].best_gbps));
  CHECK(c->gpus_allocated() == 4);
  // The departure frees the GPUs in both the simulated cluster and topofit's model.
  replay.Depart(Pod("train", 4), p);
  CHECK(c->gpus_allocated() == 0);
  Placement again = replay.Arrive(Pod("train2", 8));
  CHECK(again.ok());
}

TEST_CASE("kube-default with the device plugin's set, measured against the cluster's best") {
  auto c = Cluster({Node("dgx", "dgx1-v100", 8)});
  auto policy = MakeKubeDefaultPolicy();
  REQUIRE(policy->Reset(*c, 1).ok());
  RunMetrics m;
  RecordingReplayer replay(c.get(), policy.get(), &m);
  REQUIRE(replay.Arrive(Pod("a", 2)).ok());
  REQUIRE(m.multi.size() == 1);
  CHECK(m.multi[0].bandwidth_gbps > 0);
  CHECK(m.decision_us.size() == 1);
  CHECK(m.decision_cpu_us.size() == 1);
  CHECK(m.decision_cpu_us[0] >= 0);
  CHECK(m.no_gpu_decision_us.empty());  // A GPU pod.
}

TEST_CASE("kube-scheduler's node search: percentageOfNodesToScore and the rotating start") {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 250; ++i) nodes.push_back(Node("n" + std::to_string(i), "generic-pcie-1", 1));
  auto c = Cluster(std::move(nodes));
  std::vector<int> feasible, found;
  c->Feasible(Pod("p", 1), &feasible);
  REQUIRE(feasible.size() == 250);

  // 100 (the deployed config): every feasible node, in order, and the start never moves.
  c->NodesFound(feasible, &found);
  CHECK(found == feasible);
  c->NodesFound(feasible, &found);
  CHECK(found.front() == 0);

  // Adaptive: 50% - 250/125 = 48% of 250 is 120 nodes; the next search starts where this one stopped.
  c->set_percentage_of_nodes_to_score(0);
  c->Reset();
  c->NodesFound(feasible, &found);
  REQUIRE(found.size() == 120);
  CHECK(found.front() == 0);
  CHECK(found.back() == 119);
  c->NodesFound(feasible, &found);
  CHECK(found.front() == 120);
  c->NodesFound(feasible, &found);
  REQUIRE(found.size() == 120);
  CHECK(found.front() == 240);  // Wraps: 240..249, then 0..109.
  CHECK(found[10] == 0);
  CHECK(found.back() == 109);

  // Infeasible nodes on the way count as examined: with only even nodes feasible, 120 found nodes
  // reach node 238, and the next search starts at 239.
  std::vector<int> even;
  for (int i = 0; i < 250; i += 2) even.push_back(i);
  c->Reset();
  c->NodesFound(even, &found);
  REQUIRE(found.size() == 120);
  CHECK(found.back() == 238);
  c->NodesFound(even, &found);
  CHECK(found.front() == 240);

  // Never fewer than 100 nodes: 10% of 250 is 25, so 100.
  c->set_percentage_of_nodes_to_score(10);
  c->Reset();
  c->NodesFound(feasible, &found);
  CHECK(found.size() == 100);
}

TEST_CASE("topofit on the default profile: the tie-break, not LeastAllocated, chooses within its best band") {
  // Two equal nodes; the first 1-GPU pod lands on one of them. For the second, FragmentationGradient
  // ties both (the pod itself is the workload: it fits after on either), so without a rule both get 10
  // and LeastAllocated spreads to the empty node; fit-then-pack fills the used one.
  for (auto rule : {placement::TieBreak::kNone, placement::TieBreak::kFitThenPack}) {
    auto c = Cluster({Node("a", "pcie-8-dual-socket", 8), Node("b", "pcie-8-dual-socket", 8)});
    PolicyOptions o;
    o.pipeline.tie_break = rule;
    auto policy = MakeTopofitPolicy(o);
    REQUIRE(policy->Reset(*c, 42).ok());
    RunMetrics m;
    RecordingReplayer replay(c.get(), policy.get(), &m);
    Placement first = replay.Arrive(Pod("p1", 1, 8000, 32768));
    REQUIRE(first.ok());
    Placement second = replay.Arrive(Pod("p2", 1, 8000, 32768));
    REQUIRE(second.ok());
    CAPTURE(placement::ToString(rule));
    if (rule == placement::TieBreak::kNone) CHECK(second.node != first.node);
    else CHECK(second.node == first.node);
  }
}

TEST_CASE("fgd-gpu-pods: FGD for GPU pods, kube-scheduler's in-tree scores for pods without GPUs") {
  std::map<std::string, const PolicyInfo*> by_name;
  for (const auto& info : AllPolicies()) by_name[info.name] = &info;
  REQUIRE(by_name.count("fgd-gpu-pods"));
  REQUIRE(by_name.count("fgd-gpu-pods-mostallocated"));
  // "a" has CPU taken; a CPU-only pod goes to the emptier "b" under LeastAllocated, to "a" under
  // MostAllocated; plain FGD sees no GPU consequence either way (its score ties, broken at random).
  for (const char* name : {"fgd-gpu-pods", "fgd-gpu-pods-mostallocated"}) {
    auto c = Cluster({Node("a", "generic-pcie-4", 4), Node("b", "generic-pcie-4", 4)});
    auto policy = by_name[name]->make(PolicyOptions{});
    CHECK(policy->name() == name);
    REQUIRE(policy->Reset(*c, 42).ok());
    RunMetrics m;
    RecordingReplayer replay(c.get(), policy.get(), &m);
    PodSpec filler = Pod("filler", 0, 48000, 196608);
    filler.name = "filler";
    c->Bind(0, filler, GpuSet{});
    Placement p = replay.Arrive(Pod("cpu", 0, 4000, 1024));
    REQUIRE(p.ok());
    CAPTURE(name);
    CHECK(p.node == (std::string(name) == "fgd-gpu-pods" ? 1 : 0));
  }
}
