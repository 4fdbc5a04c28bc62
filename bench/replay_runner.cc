// `topofit bench replay` and `topofit bench synthetic`: inputs other than openb CSVs, same drivers.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "base/log.h"
#include "bench/bench_runner.h"
#include "bench/recorded_trace.h"
#include "bench/shared_node_types.h"
#include "bench/sim_cluster.h"
#include "bench/synthetic.h"
#include "extender/k8s/snapshot.h"
#include "extender/cluster/topology_resolver.h"

namespace topofit::bench {

// Defined in bench_runner.cc.
int RunCommon(const std::string& trace, SimCluster& cluster, const std::vector<PodSpec>& pods, const CommonArgs& c,
              const std::vector<uint64_t>& seeds, bool time_ordered, double stop_ratio);

namespace {

// The type of snapshot node `n`, resolved as `r` (its GPUs usable): the one of its topology, or a new one.
// Fills its GPU count, model and (on a node whose GPUs are shared) GFD labels into `s`.
int TypeOf(const k8s::NodeObject& n, const cluster::ResolvedTopology& r, NodeSpec& s, std::vector<NodeType>& types,
           std::map<const Topology*, int>& type_by_topology) {
  s.gpus = r.usable.size();
  s.model = r.profile.empty() ? "custom" : r.profile;
  if (r.shared.shared()) s.labels = n.meta.labels;  // The policies read the sharing from them, as serve does.
  auto it = type_by_topology.find(r.topology.get());
  if (it == type_by_topology.end() || types[it->second].gpus != s.gpus) {
    auto ann = n.meta.annotations.find(k8s::kTopologyAnnotation);
    NodeType t = NodeTypeOf(r, s.model,
                            !r.profile.empty() ? r.profile : (ann != n.meta.annotations.end() ? ann->second : ""));
    t.id = int(types.size());
    t.topology_spec = r.profile;
    types.push_back(t);
    it = type_by_topology.insert_or_assign(r.topology.get(), t.id).first;
  }
  return it->second;
}

}  // namespace

int RunReplayBench(const ReplayArgs& a) {
  auto snap = k8s::LoadSnapshotFile(a.snapshot);
  if (!snap) {
    Log(LogLevel::kError, "bench failed", {{"error", snap.error()}});
    return 2;
  }
  auto pods = ReadRecordedTrace(a.trace);
  if (!pods) {
    Log(LogLevel::kError, "bench failed", {{"error", pods.error()}});
    return 2;
  }
  // Each node's topology as topofit's own model resolves it (annotation, GFD labels, fallback), so the
  // replay sees the cluster the way `topofit serve` saw it.
  TopologyRegistry registry;
  cluster::TopologyResolver resolver(&registry);
  std::vector<NodeSpec> nodes;
  std::vector<NodeType> types;
  std::vector<int> type_of;
  std::map<const Topology*, int> type_by_topology;
  for (const auto& n : snap->nodes) {
    NodeSpec s;
    s.name = n.meta.name;
    s.cpu_milli = n.allocatable_cpu_milli;
    s.memory_mib = n.allocatable_memory_bytes >> 20;
    int type = -1;
    cluster::ResolvedTopology r = resolver.Resolve(n);
    if (r.topology && r.usable.size() > 0) {
      type = TypeOf(n, r, s, types, type_by_topology);
      if (s.gpus != types[type].topology->gpu_count()) {
        Log(LogLevel::kError, "bench failed",
            {{"error", fmt::format("node {}: {} of {} GPUs usable; the bench replays whole topologies only", s.name,
                                   s.gpus, types[type].topology->gpu_count())}});
        return 2;
      }
    }
    nodes.push_back(std::move(s));
    type_of.push_back(type);
  }
  auto cluster = SimCluster::Build(std::move(nodes), std::move(types), std::move(type_of));
  if (!cluster) {
    Log(LogLevel::kError, "bench failed", {{"error", cluster.error()}});
    return 2;
  }
  return RunCommon(std::filesystem::path(a.trace).stem().string(), **cluster, *pods, a.common, {42}, true, 1.3);
}

int RunSyntheticBench(const SyntheticArgs& a) {
  const SyntheticSpec& spec = a.spec;
  auto w = GenerateSynthetic(spec);
  auto seeds = ParseSeeds(a.seeds);
  if (!w || !seeds) {
    Log(LogLevel::kError, "bench failed", {{"error", (!w ? w.error() : seeds.error())}});
    return 2;
  }
  GpuModelMap empty = GpuModelMap::Parse("", "").value();
  auto cluster = SimCluster::Build(std::move(w->nodes), empty);
  if (!cluster) {
    Log(LogLevel::kError, "bench failed", {{"error", cluster.error()}});
    return 2;
  }
  return RunCommon("synthetic-" + (spec.family.empty() ? std::string() : spec.family + "-") + std::to_string(spec.seed),
                   **cluster, w->pods, a.common, *seeds, spec.with_time, 1.3);
}

}  // namespace topofit::bench
