// `--via-http` against a real `topofit serve` (the built binary) started on the snapshot that
// `--write-snapshot` writes: every placement - node and exact GPU set - must equal the in-process run
// of the same pods, because both run the same pipeline on the same cluster.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "bench/cluster_snapshot.h"
#include "bench/paper_driver.h"
#include "bench/report_writer.h"
#include "bench/topofit_http_policy.h"
#include "bench/topofit_policy.h"
#include "test/util/serve_process.h"
#include "test/util/temp_dir.h"

namespace topofit::bench {
namespace {

// Forwards to a policy and keeps every placement it made, in arrival order.
class Recording final : public Policy {
 public:
  explicit Recording(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  Status Reset(const SimCluster& c, uint64_t seed) override { return inner_->Reset(c, seed); }
  Placement Place(const SimCluster& c, const PodSpec& pod, std::span<const int> feasible) override {
    Placement p = inner_->Place(c, pod, feasible);
    placed.emplace_back(p.node, p.gpus.mask());
    return p;
  }
  void Bound(const SimCluster& c, const PodSpec& pod, const Placement& p) override { inner_->Bound(c, pod, p); }
  std::vector<std::pair<int, uint64_t>> placed;

 private:
  std::unique_ptr<Policy> inner_;
};

std::unique_ptr<SimCluster> SmallCluster() {
  std::vector<NodeSpec> nodes;
  auto add = [&](std::string name, std::string profile, int gpus, int64_t cores, int64_t mem_gib) {
    nodes.push_back({std::move(name), cores * 1000, mem_gib * 1024, gpus, profile, profile});
  };
  add("dgx-a", "dgx1-v100", 8, 64, 256);
  add("dgx-b", "dgx1-v100", 8, 64, 256);
  add("pcie-a", "pcie-8-dual-socket", 8, 96, 384);
  add("ws-a", "phb-2-workstation", 2, 16, 64);
  auto map = GpuModelMap::Parse("", "");
  REQUIRE(map.ok());
  auto cluster = SimCluster::Build(std::move(nodes), *map);
  REQUIRE_MESSAGE(cluster.ok(), cluster.error());
  return std::move(cluster).value();
}

// GPU pods only: a CPU-only pod has no extender verb, so a snapshot-fed server never learns of it.
std::vector<PodSpec> Pods() {
  std::vector<PodSpec> pods;
  const int sizes[] = {1, 2, 1, 4, 1, 8, 1, 2, 1, 1};
  for (int i = 0; i < 10; ++i) {
    PodSpec p;
    p.name = "pod-" + std::to_string(i);
    p.gpus = sizes[i];
    p.cpu_milli = (2 + 3 * (i % 4)) * 1000 * sizes[i];
    p.memory_mib = (8 + 8 * (i % 3)) * 1024 * sizes[i];
    p.gpu_milli = 1000;
    pods.push_back(p);
  }
  return pods;
}

TEST_CASE("via-http: a served run places every pod exactly as the in-process run") {
  auto cluster = SmallCluster();
  const auto pods = Pods();
  const auto sequence = PaperSequence(pods, cluster->gpu_capacity(), 1.3, 42);
  REQUIRE(sequence.size() > 10);

  PolicyOptions options;
  Recording local(MakeTopofitPolicy(options));
  RunMetrics in_process = RunPaperOnce(*cluster, local, pods, sequence, 42);
  REQUIRE(in_process.error.empty());

  testing::TempDir dir;
  const std::string snapshot = dir.File("snapshot.json");
  REQUIRE(WriteTextFile(snapshot, ClusterSnapshotJson(*cluster)).ok());
  testing::ServeProcess serve({"--snapshot", snapshot});
  options.via_http = "http://127.0.0.1:" + std::to_string(serve.port()) + "/scheduler";
  Recording served(MakeTopofitHttpPolicy(options));
  RunMetrics over_http = RunPaperOnce(*cluster, served, pods, sequence, 42);
  REQUIRE_MESSAGE(over_http.error.empty(), over_http.error);

  REQUIRE(served.placed.size() == local.placed.size());
  int placed = 0, multi = 0;
  for (size_t i = 0; i < local.placed.size(); ++i) {
    CHECK_MESSAGE(served.placed[i] == local.placed[i], "arrival " << i << " (" << pods[sequence[i]].name << ")");
    if (local.placed[i].first >= 0) {
      ++placed;
      if (pods[sequence[i]].gpus > 1) ++multi;
    }
  }
  CHECK(placed > 5);  // The comparison covers real placements, multi-GPU ones included,
  CHECK(multi > 0);
  CHECK(over_http.failed_pods == in_process.failed_pods);  // and the failures past capacity.
  CHECK(over_http.failed_pods > 0);

  // The served model keeps its pods: a second run on the same server is refused, not mis-measured.
  Recording again(MakeTopofitHttpPolicy(options));
  RunMetrics refused = RunPaperOnce(*cluster, again, pods, sequence, 43);
  CHECK(refused.error.find("already holds") != std::string::npos);
  CHECK(serve.Stop() == 0);
}

}  // namespace
}  // namespace topofit::bench
