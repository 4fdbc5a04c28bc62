// GroupPlanner microbenchmarks (issue 28's target: planning a 64-member group on 5,000 nodes, p99
// under 20 ms of CPU), and the filter of a pod of no group with and without groups reserved.
// The cluster: 5,000 8-GPU NVSwitch nodes (hgx-h100-8) labelled spine (256 nodes each) > block (32
// nodes) > hostname, with held GPUs as a busy cluster has them: half the nodes hold a random subset
// (each GPU with probability 1/2), the rest are free (seed 28: the same cluster every run).
// Each plan is the coordinator's call: ReadGroupNodes on the model, then Plan, timed in thread CPU
// time one by one; the counters are the percentiles of those times, in ms.
// Run: build/extender/groups/group_planner_perftest --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// (docs/groups.md, "Planning cost"; this machine is shared and noisy: read the medians of p50/p90/p99).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/group_reservations.h"
#include "extender/cluster/testing/builders.h"
#include "extender/groups/domain_fragmentation.h"
#include "extender/groups/domain_loss.h"
#include "extender/groups/group_coordinator.h"
#include "extender/groups/group_planner.h"
#include "extender/groups/group_shapes.h"
#include "extender/groups/network_domains.h"
#include "extender/placement/pipeline.h"

namespace topofit::groups {
namespace {

constexpr int kNodes = 5000;

struct Cluster {
  cluster::ClusterModel model;
  DomainMap map;
  std::vector<std::string> names;
};

std::unique_ptr<Cluster> MakeCluster() {
  auto c = std::make_unique<Cluster>();
  std::mt19937_64 rng(28);
  std::bernoulli_distribution busy(0.5), held(0.5);
  for (int i = 0; i < kNodes; ++i) {
    const std::string name = "node-" + std::to_string(i);
    c->model.ApplyNode(cluster::testing::MakeNode(
        name, 8, "hgx-h100-8",
        {{"spine", "s" + std::to_string(i / 256)}, {"block", "b" + std::to_string(i / 32)}, {"host", name}}));
    GpuSet h;
    if (busy(rng))
      for (int g = 0; g < 8; ++g)
        if (held(rng)) h.Add(g);
    if (!h.empty()) c->model.ApplyPod(cluster::testing::MakePod("hold-" + name, h.size(), name, h.ToString()));
    c->names.push_back(name);
  }
  c->map = DomainMap::FromModel(c->model, DomainLevels{{{"spine", {"spine"}}, {"block", {"block"}}, {"host", {"host"}}}});
  return c;
}

Cluster& Shared() {
  static auto c = MakeCluster();
  return *c;
}

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Runs `once` per iteration, timing each; reports p50/p90/p99 of the thread CPU times.
template <typename F>
void Percentiles(benchmark::State& state, F once) {
  std::vector<double> ms;
  for (auto _ : state) {
    const double t0 = ThreadCpuMs();
    once();
    ms.push_back(ThreadCpuMs() - t0);
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
  state.counters["p50_ms"] = at(0.50);
  state.counters["p90_ms"] = at(0.90);
  state.counters["p99_ms"] = at(0.99);
}

// The shapes of the replay's multi-node mix on this cluster, as a serving topofit would have learned.
void Learn(GroupShapeEstimate& e) {
  const int sizes[][3] = {{1, 8, 2}, {2, 8, 1}, {4, 8, 1}, {8, 8, 1}, {16, 8, 0}, {64, 2, 1}, {32, 4, 0}};
  for (int i = 0; i < 700; ++i) {
    const auto& s = sizes[i % 7];
    GroupSpec g;
    g.namespace_ = "learn";
    g.name = "g" + std::to_string(i);
    g.size = g.min_count = s[0];
    g.gpus = s[1];
    g.level = s[2];
    e.Observe(g);
  }
}

// range(0): GPUs per member (8, 4, 2, 1); range(1): the level (0 spine, 1 block); range(2): 1 with the
// shapes learned (DomainFragmentationScore runs), 2 the same without the planner's bounds (every
// candidate filled), 0 without shapes (BestFitLess alone).
void BM_Plan64(benchmark::State& state) {
  Cluster& c = Shared();
  placement::Placer placer;
  GroupShapeEstimate expected;
  if (state.range(2)) Learn(expected);
  GroupPlanner planner(placer, state.range(2) ? &expected : nullptr);
  planner.set_bounds(state.range(2) != 2);
  GroupSpec spec;
  spec.namespace_ = "bench";
  spec.name = "train";
  spec.size = spec.min_count = 64;
  spec.gpus = static_cast<int>(state.range(0));
  spec.level = static_cast<int>(state.range(1));
  spec.policy = LevelPolicy::kRequired;
  bool ok = true;
  Percentiles(state, [&] {
    GroupPlan plan = planner.Plan(c.model, c.map, spec);
    ok = ok && plan.ok;
    benchmark::DoNotOptimize(plan);
  });
  const char* what[] = {", no shape", ", shapes learned", ", shapes learned, no bounds"};
  state.SetLabel(std::string(ok ? "planned" : "NO PLAN") + what[state.range(2)]);
}
BENCHMARK(BM_Plan64)
    ->ArgsProduct({{8, 4, 2, 1}, {0, 1}, {0, 1, 2}})
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond);

// Pipeline::Filter of a 2-GPU pod of no group on the 5,000 nodes, after 8 groups of 64 members x 8
// GPUs were planned: range(0) = 1, their slots reserved (GroupReservations: 4,096 GPUs held by
// placeholders); range(0) = 0, the same GPUs held by ordinary bound pods instead - the same free
// GPUs, so the difference is what groups being present costs such a pod (the server's filter does
// this for it either way; the coordinator only asks whether it is a member).
void BM_FilterNoGroup(benchmark::State& state) {
  auto c = MakeCluster();
  cluster::GroupReservations reservations(c->model);
  placement::Placer placer;
  GroupPlanner planner(placer);
  for (int g = 0; g < 8; ++g) {
    GroupSpec spec;
    spec.namespace_ = "bench";
    spec.name = "g" + std::to_string(g);
    spec.size = spec.min_count = 64;
    spec.gpus = 8;
    spec.level = 0;
    spec.policy = LevelPolicy::kRequired;
    GroupPlan plan = planner.Plan(c->model, c->map, spec);
    std::vector<cluster::GroupReservations::SlotRequest> slots;
    for (const MemberPlan& m : plan.members) slots.push_back({m.node_name, m.gpus});
    if (!plan.ok) state.SkipWithError("no plan");
    if (state.range(0)) {
      if (!reservations.Reserve(spec.key(), slots).ok()) state.SkipWithError("reserve failed");
      continue;
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      c->model.ApplyPod(cluster::testing::MakePod(spec.name + "-" + std::to_string(i), slots[i].gpus.size(),
                                                  slots[i].node, slots[i].gpus.ToString()));
    }
  }
  placement::Pipeline pipeline(&c->model);
  const cluster::PodRequest pod = cluster::testing::Request("single", 2);
  Percentiles(state, [&] { benchmark::DoNotOptimize(pipeline.Filter(pod, c->names)); });
  state.SetLabel(state.range(0) ? "8 groups reserved" : "the same GPUs held by pods of no group");
}
BENCHMARK(BM_FilterNoGroup)->Arg(0)->Arg(1)->Iterations(300)->Unit(benchmark::kMillisecond);

// Pipeline::Prioritize of a 1-GPU pod of no group on the 5,000 nodes (what --filter-keeps-best runs in
// its filter): range(0) = 0, no BandLoss set (before the domain loss); 1, the coordinator's DomainLoss
// set but no group shape learnt (a cluster without groups); 2, the shapes learnt, so the best band's
// domain loss is scored (domain_loss.h). range(1) = 1: before each call one node's GPUs change (a pod
// bound, then deleted, in turn), so DomainLoss reads every node again, as between two binds;
// 0: nothing changes, so it reuses its last read, as between a pod's filter and prioritize.
// range(2) = 2: DomainLoss scores the band node by node (set_by_class(false)), as it did before
// ScoreNodes; 1: that, and it reads every node afresh after a change (set_incremental(false)) too, as
// it did before it was brought up to date node by node.
void BM_PrioritizeNoGroup(benchmark::State& state) {
  Cluster& c = Shared();
  placement::Pipeline pipeline(&c.model);
  const DomainLevels levels{{{"spine", {"spine"}}, {"block", {"block"}}, {"host", {"host"}}}};
  GroupLookup lookup(levels);
  GroupShapeEstimate expected;
  if (state.range(0) == 2) Learn(expected);
  DomainMapCache maps(c.model, levels);
  DomainLoss loss(maps, lookup, expected);
  loss.set_incremental(state.range(2) != 1);
  loss.set_by_class(state.range(2) == 0);
  if (state.range(0) >= 1) pipeline.SetBandLoss(&loss);
  const cluster::PodRequest pod = cluster::testing::Request("single", 1);
  const k8s::PodObject churn = cluster::testing::MakePod("churn", 1, "node-1", "0");
  int calls = 0;
  Percentiles(state, [&] {
    if (state.range(1)) {
      if (calls++ % 2) {
        c.model.DeletePod("churn");
      } else {
        c.model.ApplyPod(churn);
      }
    }
    benchmark::DoNotOptimize(pipeline.Prioritize(pod, c.names));
  });
  c.model.DeletePod("churn");
  const char* what[] = {"no band loss", "domain loss, no group shape", "domain loss, shapes learned"};
  state.SetLabel(std::string(what[state.range(0)]) + (state.range(1) ? ", a node changed before each call" : "") +
                 (state.range(2) == 1 ? ", read afresh, node by node" : "") +
                 (state.range(2) == 2 ? ", node by node" : ""));
}
BENCHMARK(BM_PrioritizeNoGroup)
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {0}})
    ->Args({2, 0, 2})
    ->Args({2, 1, 2})
    ->Args({2, 1, 1})
    ->Iterations(300)
    ->Unit(benchmark::kMillisecond);

// DomainFragmentationScore on a band of every node (a 1-GPU pod's band on this cluster is 4,987 of
// its 5,000 nodes), 7 shapes learned: range(0) = 0 ScoreNode node by node (as DomainLoss did),
// 1 ScoreNodes after ClassifyNodes (once per block and free count, as DomainLoss does now).
void BM_ScoreBand(benchmark::State& state) {
  Cluster& c = Shared();
  GroupShapeEstimate expected;
  Learn(expected);
  DomainFragmentationScore score;
  score.PreScore(ReadGroupNodes(c.model, c.map), *expected.Snapshot());
  if (state.range(0)) score.ClassifyNodes();
  std::vector<int> band(kNodes);
  for (int i = 0; i < kNodes; ++i) band[i] = i;
  std::vector<double> out(kNodes);
  Percentiles(state, [&] {
    if (state.range(0)) {
      score.ScoreNodes(band, 1, out);
    } else {
      for (int i = 0; i < kNodes; ++i) out[i] = score.ScoreNode(i, 1);
    }
    benchmark::DoNotOptimize(out.data());
  });
  state.SetLabel(state.range(0) ? "ScoreNodes, by class" : "ScoreNode, node by node");
}
BENCHMARK(BM_ScoreBand)->Arg(0)->Arg(1)->Iterations(300)->Unit(benchmark::kMillisecond);

// DomainLoss::Losses alone, as the pipeline asks it: the 4,987 nodes of a 1-GPU pod's band (every node
// with a free GPU), found through one Reader, 7 shapes learned, nothing changed between calls (the
// kept PreScore; its read is not timed). What a pod of no group pays for the domain loss beyond the
// band's tie-break.
void BM_DomainLossBand(benchmark::State& state) {
  Cluster& c = Shared();
  const DomainLevels levels{{{"spine", {"spine"}}, {"block", {"block"}}, {"host", {"host"}}}};
  GroupLookup lookup(levels);
  GroupShapeEstimate expected;
  Learn(expected);
  DomainMapCache maps(c.model, levels);
  DomainLoss loss(maps, lookup, expected);
  const cluster::PodRequest pod = cluster::testing::Request("single", 1);
  if (!loss.Enabled(pod)) state.SkipWithError("the domain loss is not enabled");
  auto reader = c.model.Read();
  std::vector<const cluster::NodeState*> band;
  for (const std::string& n : c.names)
    if (const cluster::NodeState* node = reader.Find(n); node && !(node->free() & node->usable()).empty())
      band.push_back(node);
  std::vector<double> out(band.size());
  loss.Losses(reader, pod, band, out);  // The PreScore read once, then kept.
  Percentiles(state, [&] {
    loss.Losses(reader, pod, band, out);
    benchmark::DoNotOptimize(out.data());
  });
  state.SetLabel(std::to_string(band.size()) + " band nodes");
}
BENCHMARK(BM_DomainLossBand)->Iterations(300)->Unit(benchmark::kMillisecond);

// GroupCoordinator::Filter of the members of a group that fits nowhere (32 members of 8 GPUs, required
// in one block of 32 nodes, about half of them partly held), round-robin, as kube-scheduler v1.36.3 retries such a gang without backoff
// while its queue is otherwise empty. range(0) = 1: before each call one node's GPUs change, so the
// failed plan is made again; 0: nothing changes, so the coordinator recalls it. range(1) = 1: the
// members' priority is above the held pods', so the plan if kube-scheduler preempted is made too (and
// each member is led to its slot there).
void BM_FilterWaitingGroup(benchmark::State& state) {
  Cluster& c = Shared();
  placement::Pipeline pipeline(&c.model);
  GroupLookup lookup(DomainLevels{{{"spine", {"spine"}}, {"block", {"block"}}, {"host", {"host"}}}});
  GroupCoordinator groups(pipeline, lookup);
  std::vector<cluster::PodRequest> members;
  for (int i = 0; i < 32; ++i) {
    k8s::PodObject pod = cluster::testing::MakePod(
        "member-" + std::to_string(i), 8, "", "", state.range(1) ? 1000 : 0,
        {{"topofit.io/group", "big"}, {"topofit.io/group-size", "32"}, {"topofit.io/group-level", "block"},
         {"topofit.io/group-policy", "required"}});
    c.model.ApplyPod(pod);
    members.push_back(cluster::MakePodRequest(pod));
  }
  const k8s::PodObject churn = cluster::testing::MakePod("churn", 1, "node-1", "0");
  size_t calls = 0;
  bool held = true;
  Percentiles(state, [&] {
    if (state.range(0)) {
      if (calls % 2) {
        c.model.DeletePod("churn");
      } else {
        c.model.ApplyPod(churn);
      }
    }
    const bool led = !groups.Filter(members[calls++ % members.size()]).node.empty();
    held = held && led == (state.range(1) == 1);
  });
  c.model.DeletePod("churn");
  for (const cluster::PodRequest& m : members) c.model.DeletePod(m.uid);
  state.SetLabel(std::string(held ? "" : "UNEXPECTED VERDICT, ") +
                 (state.range(0) ? "a node changed before each call" : "nothing changed") +
                 (state.range(1) ? ", planned if preempted" : ""));
}
BENCHMARK(BM_FilterWaitingGroup)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace topofit::groups
