// DRA-backed nodes in the bench (dra_nodes.h): every policy gets the allocator's first fit there, and
// topofit chooses the node by the first fit it predicts with serve's code (docs/dra.md "Bench").
#include "bench/dra_nodes.h"

#include <doctest/doctest.h>

#include <set>

#include "bench/kube_policies.h"
#include "bench/policy.h"
#include "bench/run_metrics.h"
#include "bench/topofit_policy.h"

using namespace topofit;
using namespace topofit::bench;

namespace {

std::unique_ptr<SimCluster> Cluster(std::vector<NodeSpec> nodes, DraNodes mode) {
  auto map = GpuModelMap::Parse("", "");
  auto c = SimCluster::Build(std::move(nodes), *map);
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  MarkDraNodes(**c, mode);
  return std::move(c).value();
}

NodeSpec Node(std::string name, std::string profile, int gpus, int64_t cpu = 96000, int64_t mem = 393216) {
  return NodeSpec{std::move(name), cpu, mem, gpus, profile, profile};
}

PodSpec Pod(std::string name, int gpus, int64_t cpu = 1000) {
  PodSpec p;
  p.name = std::move(name);
  p.gpus = gpus;
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  return p;
}

// As a driver does, but with the feasible nodes named.
Placement PlaceOn(SimCluster& c, Policy& policy, const PodSpec& pod, std::vector<int> feasible) {
  Placement p = policy.Place(c, pod, feasible);
  if (p.ok()) {
    c.Bind(p.node, pod, p.gpus);
    policy.Bound(c, pod, p);
  }
  return p;
}

}  // namespace

TEST_CASE("DRA nodes: none, all, half (every other node of each type), CPU-only nodes never") {
  CHECK(*ParseDraNodes("half") == DraNodes::kHalf);
  CHECK_FALSE(ParseDraNodes("some").ok());
  auto c = Cluster({Node("d0", "dgx1-v100", 8), Node("p0", "pcie-8-dual-socket", 8), Node("cpu", "", 0),
                    Node("d1", "dgx1-v100", 8), Node("p1", "pcie-8-dual-socket", 8), Node("d2", "dgx1-v100", 8)},
                   DraNodes::kHalf);
  std::vector<bool> dra;
  for (const auto& n : c->nodes()) dra.push_back(n.dra);
  CHECK(dra == std::vector<bool>{true, true, false, false, false, true});
  CHECK(c->Clone()->node(5).dra);  // A run's copy keeps them.
  MarkDraNodes(*c, DraNodes::kNone);
  CHECK_FALSE(c->any_dra());
  CHECK(DraFirstFit(c->node(0), 3) == GpuSet::Of({0, 1, 2}));
  CHECK(DraFirstFit(c->node(2), 1).empty());
}

TEST_CASE("DRA nodes: whatever the policy chose the node by, its GPUs are the allocator's first fit") {
  const std::vector<int> sizes{8, 2, 1, 4, 3, 1, 2, 2, 1, 2, 1};
  for (const PolicyInfo& info : AllPolicies()) {
    CAPTURE(info.name);
    auto c = Cluster({Node("d0", "dgx1-v100", 8), Node("p0", "pcie-8-dual-socket", 8), Node("d1", "dgx1-v100", 8),
                      Node("p1", "pcie-8-dual-socket", 8, 48000)},
                     DraNodes::kAll);
    auto policy = info.make(PolicyOptions{});
    REQUIRE(policy->Reset(*c, 7).ok());
    RunMetrics m;
    RecordingReplayer replay(c.get(), policy.get(), &m);
    int placed = 0;
    Placement second;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::vector<SimNode> before = c->nodes();
      Placement p = replay.Arrive(Pod("p" + std::to_string(i), sizes[i]));
      REQUIRE(p.ok());
      CHECK(p.gpus == DraFirstFit(before[p.node], sizes[i]));
      if (i == 1) second = p;
      ++placed;
      if (i == 5) replay.Depart(Pod("p1", sizes[1]), second);  // Its claim goes; its GPUs are free again.
    }
    CHECK(c->gpus_allocated() == 25);
    if (info.name.starts_with("topofit")) {
      CHECK(policy->extender_stats().dra_binds == placed);
      CHECK(policy->extender_stats().dra_mispredicted == 0);
    }
  }
}

TEST_CASE("DRA nodes: topofit takes the node whose first fit is the better ring, kube-default does not") {
  // a: 3 GPUs held (first fit 0,1,2), so a 2-GPU pod's first fit there is 3,4 - across the sockets.
  // b: smaller (kube-default's LeastAllocated prefers a), empty: first fit 0,1 on one socket.
  auto run = [](const std::string& name) {
    auto c = Cluster({Node("a", "pcie-8-dual-socket", 8), Node("b", "pcie-8-dual-socket", 8, 8000, 32768)},
                     DraNodes::kAll);
    auto policy = name == "topofit" ? MakeTopofitPolicy(PolicyOptions{}) : MakeKubeDefaultPolicy();
    REQUIRE(policy->Reset(*c, 1).ok());
    Placement held = PlaceOn(*c, *policy, Pod("held", 3), {0});
    REQUIRE(held.ok());
    CHECK(held.gpus == GpuSet::Of({0, 1, 2}));
    Placement p = PlaceOn(*c, *policy, Pod("pair", 2), {0, 1});
    REQUIRE(p.ok());
    const auto& sel = c->type_of(p.node).topology->selector();
    return std::make_tuple(p.node, p.gpus, sel.RingMbps(p.gpus));
  };
  auto [kube_node, kube_gpus, kube_ring] = run("kube-default");
  auto [topofit_node, topofit_gpus, topofit_ring] = run("topofit");
  CHECK(kube_node == 0);
  CHECK(kube_gpus == GpuSet::Of({3, 4}));
  CHECK(topofit_node == 1);
  CHECK(topofit_gpus == GpuSet::Of({0, 1}));
  CHECK(topofit_ring > kube_ring);
}

TEST_CASE("DRA nodes: topofit's model holds a GPU pod's CPU and memory there too, so it places as on device-plugin nodes") {
  // Nodes whose GPUs are all alike (every pair NODE): the first fit is as good as any set, so only
  // what the model knows of CPU and memory (the resource-aware score) can set the two modes apart.
  auto run = [](DraNodes mode) {
    auto c = Cluster({Node("a", "generic-pcie-4", 4, 16000, 65536), Node("b", "generic-pcie-4", 4, 32000, 65536),
                      Node("c", "generic-pcie-4", 4, 64000, 131072)},
                     mode);
    auto policy = MakeTopofitPolicy(PolicyOptions{});
    REQUIRE(policy->Reset(*c, 3).ok());
    RunMetrics m;
    RecordingReplayer replay(c.get(), policy.get(), &m);
    std::vector<int> nodes;
    const std::vector<int64_t> cpus{12000, 2000, 8000, 1000, 14000, 4000, 6000, 3000, 10000};
    for (size_t i = 0; i < cpus.size(); ++i) nodes.push_back(replay.Arrive(Pod("p" + std::to_string(i), 1, cpus[i])).node);
    return nodes;
  };
  const std::vector<int> device_plugin = run(DraNodes::kNone);
  CHECK(device_plugin == run(DraNodes::kAll));
  CHECK(std::set<int>(device_plugin.begin(), device_plugin.end()).size() > 1);
}
