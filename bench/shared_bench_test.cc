// The shared-GPU bench: shapes to GFD labels and the extender's model of them, the device plugin's own
// choice of replicas and MIG devices (greedyAlloc), and the metrics counting replicas of one GPU.
#include <doctest/doctest.h>

#include <random>

#include "bench/device_plugin_replicas.h"
#include "bench/paper_driver.h"
#include "bench/shared_metrics.h"
#include "bench/shared_node_types.h"
#include "bench/synthetic.h"
#include "extender/k8s/objects.h"

using namespace topofit;
using namespace topofit::bench;

namespace {

// A node of `gpus` GPUs of profile `profile`, its GPUs shared as `shape` ("" = whole).
NodeSpec Node(const std::string& name, const std::string& profile, int gpus, const std::string& shape) {
  NodeSpec n{name, 96000, 393216, gpus, profile, profile};
  if (!shape.empty()) REQUIRE(ApplySharingShape(shape, n).ok());
  return n;
}

std::unique_ptr<SimCluster> Cluster(std::vector<NodeSpec> nodes) {
  auto c = SimCluster::Build(std::move(nodes), GpuModelMap::Parse("", "").value());
  REQUIRE(c.ok());
  return std::move(c).value();
}

cluster::SharedDevices Replicas(int gpus, int per_gpu) {
  cluster::SharedDevices s;
  s.mode = cluster::SharingMode::kTimeSlicing;
  s.gpus = gpus;
  s.per_gpu = per_gpu;
  return s;
}

PodSpec Pod(const std::string& name, int gpus, bool packed = false) {
  PodSpec p;
  p.name = name;
  p.gpus = gpus;
  p.cpu_milli = 1000;
  p.memory_mib = 1024;
  p.packed = packed;
  return p;
}

}  // namespace

TEST_CASE("shared bench: sharing shapes become GFD labels that the extender's resolver models") {
  NodeSpec ts = Node("ts", "hgx-a100-8", 8, "ts4");
  CHECK(ts.gpus == 32);
  CHECK(ts.labels.at(k8s::kGfdReplicasLabel) == "4");
  CHECK(ts.labels.at(k8s::kGfdCountLabel) == "8");
  CHECK(ts.labels.at(k8s::kGfdSharingStrategyLabel) == "time-slicing");
  NodeSpec mig = Node("mig", "hgx-a100-8", 8, "mig-1g.10gb");
  CHECK(mig.gpus == 56);
  CHECK(mig.labels.at(k8s::kGfdCountLabel) == "56");
  CHECK(Node("m3", "hgx-a100-8", 8, "mig-3g.40gb").gpus == 16);
  NodeSpec bad{"b", 1000, 1024, 8, "hgx-a100-8", "hgx-a100-8"};
  CHECK(!ApplySharingShape("ts1", bad).ok());
  CHECK(!ApplySharingShape("spread4", bad).ok());

  auto c = Cluster({Node("w", "hgx-a100-8", 8, ""), ts, mig});
  REQUIRE(c->types().size() == 3);
  const NodeType& t = c->type_of(1);
  CHECK(t.shared.mode == cluster::SharingMode::kTimeSlicing);
  CHECK(t.topology->gpu_count() == 32);
  CHECK(t.physical->gpu_count() == 8);
  CHECK(c->type_of(2).shared.mig());
  CHECK(c->type_of(0).physical == c->type_of(0).topology);
  CHECK(c->gpu_capacity() == 8 + 32 + 56);
}

TEST_CASE("shared bench: --share makes one model's nodes shared, through the GPU model map") {
  auto map = GpuModelMap::Parse("T4,2,phb-2-workstation,x\nV100M16,8,dgx1-v100,x\n", ".");
  REQUIRE(map.ok());
  std::vector<NodeSpec> nodes{{"t", 32000, 65536, 2, "T4", ""}, {"v", 96000, 393216, 8, "V100M16", ""}};
  REQUIRE(ShareModels("T4@ts4", *map, nodes).ok());
  CHECK(nodes[0].gpus == 8);
  CHECK(nodes[0].profile == "phb-2-workstation");
  CHECK(nodes[1].gpus == 8);
  CHECK(nodes[1].labels.empty());
  auto c = SimCluster::Build(nodes, *map);
  REQUIRE(c.ok());
  CHECK((*c)->type_of(0).shared.per_gpu == 4);
  CHECK(!(*c)->type_of(1).shared.shared());
  CHECK(!ShareModels("A100@ts4", *map, nodes).ok());
  CHECK(!ShareModels("V100M16", *map, nodes).ok());
  CHECK(ShareModels("", *map, nodes).ok());
}

TEST_CASE("device plugin, replicas: distributed takes a GPU with few replicas held twice") {
  const cluster::SharedDevices s = Replicas(8, 4);
  const GpuSet all = GpuSet::FirstN(32);
  // GPU 0 has nothing held; every other GPU 2 of its 4 replicas.
  GpuSet free = s.DevicesOf(0);
  for (int g = 1; g < 8; ++g) free.Add(g * 4), free.Add(g * 4 + 1);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    auto got = DevicePluginSharedChoice(s, all, free, 2, rng);
    REQUIRE(got);
    CHECK(s.GpusOf(*got) == GpuSet::Of({0}));  // 0 held, then 1 < 2: GPU 0 again.
    CHECK(ExtraReplicas(s, *got) == 1);
    // A pod of 4: GPU 0 to 2 held, then ties at 2 broken by the picks of this call.
    auto four = DevicePluginSharedChoice(s, all, free, 4, rng);
    REQUIRE(four);
    CHECK((*four & s.DevicesOf(0)).size() == 2);
    CHECK(s.GpusOf(*four).size() == 3);
  }
}

TEST_CASE("device plugin, replicas: an idle node spreads, the packed policy stacks, too few free devices fail") {
  const cluster::SharedDevices s = Replicas(8, 4);
  const GpuSet all = GpuSet::FirstN(32);
  std::mt19937_64 rng(7);
  auto spread = DevicePluginSharedChoice(s, all, all, 8, rng);
  REQUIRE(spread);
  CHECK(s.GpusOf(*spread).size() == 8);
  auto packed = DevicePluginSharedChoice(s, all, all, 3, rng, SharedAllocationPolicy::kPacked);
  REQUIRE(packed);
  CHECK(s.GpusOf(*packed).size() == 1);
  CHECK(!DevicePluginSharedChoice(s, all, GpuSet::Of({1, 5}), 3, rng));
}

TEST_CASE("device plugin, MIG: every device an id of its own, so the choice ignores which GPU is fuller") {
  cluster::SharedDevices s = Replicas(8, 7);
  s.mode = cluster::SharingMode::kMigSingle;
  const GpuSet all = GpuSet::FirstN(56);
  const GpuSet free = all - GpuSet::Of({7, 8});  // GPU 1 partly held: best fit would take its devices.
  GpuSet gpus_seen;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    auto got = DevicePluginSharedChoice(s, all, free, 2, rng);
    REQUIRE(got);
    CHECK(got->size() == 2);
    CHECK(got->IsSubsetOf(free));
    CHECK(ExtraReplicas(s, *got) == 0);  // MIG devices are not replicas.
    gpus_seen = gpus_seen | s.GpusOf(*got);
  }
  CHECK(gpus_seen.size() == 8);
}

TEST_CASE("shared metrics: extra replicas, whole GPUs free, doubled pods counted by the replay") {
  const cluster::SharedDevices s = Replicas(8, 4);
  CHECK(ExtraReplicas(s, GpuSet::Of({0, 1})) == 1);
  CHECK(ExtraReplicas(s, GpuSet::Of({0, 4, 8})) == 0);
  CHECK(ExtraReplicas(s, GpuSet::Of({0, 1, 2, 5})) == 2);
  CHECK(ExtraReplicas(cluster::SharedDevices{}, GpuSet::Of({0, 1})) == 0);

  auto c = Cluster({Node("w", "phb-2-workstation", 2, ""), Node("ts", "phb-2-workstation", 2, "ts4")});
  CHECK(HasSharedNodes(*c));
  CHECK(CountWholeGpus(*c).total == 4);
  // Already held on the time-sliced node: GPU 0's replicas 2, 3 and all of GPU 1's; a whole GPU on "w".
  c->Bind(1, Pod("held", 6), GpuSet::Of({2, 3, 4, 5, 6, 7}));
  c->Bind(0, Pod("w0", 1), GpuSet::Of({0}));
  CHECK(CountWholeGpus(*c).free == 1);
  // kube-scheduler sees 2 free devices on "ts" (and one on "w"): the plugin gives GPU 0's two replicas.
  auto kube = SelectPolicies("kube-default").value()[0]->make({});
  REQUIRE(kube->Reset(*c, 1).ok());
  RunMetrics m;
  RecordingReplayer replay(c.get(), kube.get(), &m);
  Placement p = replay.Arrive(Pod("two", 2));
  REQUIRE(p.node == 1);
  CHECK(p.gpus == GpuSet::Of({0, 1}));
  CHECK(m.doubled_pods == 1);
  REQUIRE(m.multi.size() == 1);
  CHECK(m.multi[0].extra_replicas == 1);
  CHECK(m.multi[0].kind == uint8_t(DeviceKind::kReplica));
  CHECK(FormatSharedTable({m}).find("kube-default") != std::string::npos);
}

TEST_CASE("shared bench: on the shared family topofit gives no pod two replicas it did not ask for") {
  SyntheticSpec spec;
  spec.family = "shared";
  spec.pods = 300;
  auto w = GenerateSynthetic(spec);
  REQUIRE(w.ok());
  auto c = Cluster(std::move(w->nodes));
  CHECK(HasSharedNodes(*c));
  auto seq = PaperSequence(w->pods, c->gpu_capacity(), 1.3, 42);
  auto topofit = SelectPolicies("topofit").value()[0]->make({});
  RunMetrics m = RunPaperOnce(*c, *topofit, w->pods, seq, 42);
  REQUIRE(m.error.empty());
  CHECK(m.doubled_pods == 0);
  CHECK(m.whole_gpus_free_pct_at_100 >= 0);
  int64_t packed_on_replicas = 0;
  for (const auto& p : m.multi) packed_on_replicas += p.kind == uint8_t(DeviceKind::kReplica) && p.packed;
  CHECK(packed_on_replicas > 0);
}
