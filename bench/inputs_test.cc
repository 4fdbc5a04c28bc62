// Input readers: openb CSV, GPU model map, recorded JSON-lines trace, synthetic generator.
#include <doctest/doctest.h>

#include "bench/gpu_models.h"
#include "bench/openb_csv.h"
#include "bench/recorded_trace.h"
#include "bench/synthetic.h"

using namespace topofit::bench;

TEST_CASE("openb pods: a GPU-sharing pod asks for one whole GPU, gpu_spec splits on |") {
  auto pods = ParseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "a,6000,12288,1,460,,LS,Running,10,20,10\n"
      "b,12000,16384,8,1000,V100M16|V100M32,LS,Running,0,,0\n"
      "c,1000,1024,0,0,,BE,Running,5,6,5\n");
  REQUIRE(pods.ok());
  REQUIRE(pods->size() == 3);
  CHECK((*pods)[0].gpus == 1);
  CHECK((*pods)[0].gpu_milli == 460);
  CHECK((*pods)[0].deletion_time == 20);
  CHECK((*pods)[1].gpus == 8);
  CHECK((*pods)[1].gpu_models == std::vector<std::string>{"V100M16", "V100M32"});
  CHECK_FALSE((*pods)[1].deletion_time.has_value());
  CHECK((*pods)[2].gpus == 0);
}

TEST_CASE("openb: short pod lists read, bad numbers name the line") {
  auto pods = ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,2,1000\n");
  REQUIRE(pods.ok());
  CHECK((*pods)[0].gpus == 2);
  auto bad = ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,x,2,P100\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("line 2") != std::string::npos);
  CHECK_FALSE(ParseOpenbNodes("sn,cpu_milli,gpu\n").ok());
}

TEST_CASE("the shared openb node list reads whole") {
  auto nodes = ReadOpenbNodes(std::string(TOPOFIT_TRACES_DIR) + "/openb/openb_node_list_gpu_node.csv");
  REQUIRE(nodes.ok());
  CHECK(nodes->size() == 1213);
  int gpus = 0;
  for (const auto& n : *nodes) gpus += n.gpus;
  CHECK(gpus == 6212);
}

TEST_CASE("GPU model map: first match wins, {n} expands, files resolve beside the map") {
  auto map = GpuModelMap::Parse(
      "# comment\nV100M16,8,dgx1-v100,cube mesh, with a comma\nV100M16,4,topo/quad.txt,quad\n*,*,generic-pcie-{n},rest\n",
      "/etc/topofit");
  REQUIRE(map.ok());
  CHECK(map->rules()[0].why == "cube mesh, with a comma");
  CHECK(*map->TopologyFor("V100M16", 8) == "dgx1-v100");
  CHECK(*map->TopologyFor("V100M16", 4) == "/etc/topofit/topo/quad.txt");
  CHECK(*map->TopologyFor("T4", 2) == "generic-pcie-2");
  CHECK_FALSE(GpuModelMap::Parse("V100,x,dgx1-v100,why\n", "").ok());
  auto none = GpuModelMap::Parse("V100,8,dgx1-v100,why\n", "");
  CHECK_FALSE(none->TopologyFor("T4", 2).ok());
}

TEST_CASE("the shipped GPU model map covers every openb node") {
  auto map = GpuModelMap::Load(std::string(TOPOFIT_SOURCE_DIR) + "/bench/gpu-models.csv");
  REQUIRE(map.ok());
  auto nodes = ReadOpenbNodes(std::string(TOPOFIT_TRACES_DIR) + "/openb/openb_node_list_gpu_node.csv");
  REQUIRE(nodes.ok());
  topofit::TopologyRegistry registry;
  for (const auto& n : *nodes) {
    auto spec = map->TopologyFor(n.model, n.gpus);
    REQUIRE_MESSAGE(spec.ok(), n.model);
    auto topo = ResolveTopology(*spec, n.gpus, registry);
    REQUIRE_MESSAGE(topo.ok(), *spec, ": ", (topo.ok() ? "" : topo.error()));
  }
}

TEST_CASE("a recorded serve trace replays: first filter or prioritize-pods-without-gpus per UID is the arrival, delete lines depart") {
  const char* pod_a = R"({"metadata":{"name":"a","namespace":"ml","uid":"u-a"},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"4"},"requests":{"cpu":"8","memory":"32Gi"}}}]},"status":{}})";
  const char* pod_b = R"({"metadata":{"name":"b","namespace":"ml","uid":"u-b"},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{}})";
  std::string trace;
  trace += std::string(R"({"ts":100,"verb":"filter","request":{"Pod":)") + pod_a + R"(,"Nodes":null,"NodeNames":["n1"]},"response":{"NodeNames":["n1"]}})" "\n";
  trace += std::string(R"({"ts":101,"verb":"prioritize","request":{"Pod":)") + pod_a + R"(,"NodeNames":["n1"]},"response":[]})" "\n";
  trace += std::string(R"({"ts":102,"verb":"filter","request":{"Pod":)") + pod_a + R"(,"NodeNames":["n1"]},"response":{}})" "\n";
  trace += std::string(R"({"ts":130,"verb":"filter","request":{"Pod":)") + pod_b + R"(,"NodeNames":["n1"]},"response":{}})" "\n";
  trace += R"({"ts":160,"verb":"delete","uid":"u-a"})" "\n";
  // A pod without GPUs reaches only the second extender entry; a GPU pod's call there is no arrival.
  const char* pod_c = R"({"metadata":{"name":"c","namespace":"ml","uid":"u-c"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"2","memory":"1Gi"}}}]},"status":{}})";
  trace += std::string(R"({"ts":170,"verb":"prioritize-pods-without-gpus","request":{"Pod":)") + pod_b + R"(,"NodeNames":["n1"]},"response":[]})" "\n";
  trace += std::string(R"({"ts":175,"verb":"prioritize-pods-without-gpus","request":{"Pod":)") + pod_c + R"(,"NodeNames":["n1"]},"response":[]})" "\n";
  auto pods = ParseRecordedTrace(trace);
  REQUIRE_MESSAGE(pods.ok(), (pods.ok() ? "" : pods.error()));
  REQUIRE(pods->size() == 3);
  CHECK((*pods)[2].name == "u-c");
  CHECK((*pods)[2].gpus == 0);
  CHECK((*pods)[2].cpu_milli == 2000);
  CHECK((*pods)[2].creation_time == 75);
  CHECK((*pods)[0].name == "u-a");
  CHECK((*pods)[0].gpus == 4);
  CHECK((*pods)[0].cpu_milli == 8000);
  CHECK((*pods)[0].memory_mib == 32 * 1024);
  CHECK((*pods)[0].creation_time == 0);
  CHECK((*pods)[0].deletion_time == 60);
  CHECK((*pods)[1].creation_time == 30);
  CHECK_FALSE((*pods)[1].deletion_time.has_value());
  CHECK_FALSE(ParseRecordedTrace("{not json\n").ok());
}

TEST_CASE("synthetic workloads are seeded") {
  SyntheticSpec spec{"dgx1-v100:2,phb-2-workstation:3", "1:1,8:1", 50, 7, true};
  auto a = GenerateSynthetic(spec), b = GenerateSynthetic(spec);
  REQUIRE(a.ok());
  CHECK(a->nodes.size() == 5);
  CHECK(a->nodes[0].gpus == 8);
  CHECK(a->nodes[4].gpus == 2);
  REQUIRE(a->pods.size() == 50);
  for (size_t i = 0; i < 50; ++i) {
    CHECK(a->pods[i].gpus == b->pods[i].gpus);
    CHECK((a->pods[i].gpus == 1 || a->pods[i].gpus == 8));
    CHECK(a->pods[i].deletion_time.value() >= a->pods[i].creation_time);
  }
  CHECK_FALSE(GenerateSynthetic({"nope:1", "1:1", 1, 1, false}).ok());
}
