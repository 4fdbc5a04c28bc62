// `topofit bench replay` on what a real `topofit serve --record` wrote: the built server is started
// with --record on a two-node snapshot, receives filter / prioritize / bind as kube-scheduler sends
// them, is stopped, and the recording is replayed by the built `topofit bench replay`.
//
// By hand: dgx (DGX-1 V100, 8 GPUs) and pcie4 (4 PCIe GPUs) hold 12 GPUs; three 4-GPU pods fill
// them whatever the order (the DGX takes two, pcie4 one) and a fourth pod of 1 GPU finds nothing.
// So every policy replays 4 pods, places the three 4-GPU ones and fails the last; topofit gives the
// 4-GPU pods the best set available each time, and the live server put the first one on an NVLink
// quad of the DGX.
#include <doctest/doctest.h>
#include <httplib.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/report_writer.h"
#include "base/files.h"
#include "test/util/serve_process.h"
#include "test/util/temp_dir.h"

namespace topofit::bench {
namespace {

using nlohmann::json;

constexpr const char* kSnapshot = R"({"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Node", "metadata": {"name": "dgx", "annotations": {"topofit.io/gpu-topology": "dgx1-v100"}},
  "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"}}},
 {"kind": "Node", "metadata": {"name": "pcie4", "annotations": {"topofit.io/gpu-topology": "pcie-4-single-socket"}},
  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"}}}]})";

json Pod(const std::string& name, int gpus) {
  json gpu = {{"nvidia.com/gpu", std::to_string(gpus)}};
  json requests = {{"cpu", "2"}, {"memory", "8Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec", {{"schedulerName", "topofit-scheduler"},
                    {"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}, {"limits", gpu}}}}})}}},
          {"status", {{"phase", "Pending"}}}};
}

// kube-scheduler's extender calls for one pod: filter, prioritize (when more than one node is left),
// bind to the best-scored node. Returns the node bound, "" when filter kept none.
std::string Schedule(httplib::Client& client, const std::string& name, int gpus) {
  json args = {{"Pod", Pod(name, gpus)}, {"Nodes", nullptr}, {"NodeNames", {"dgx", "pcie4"}}};
  auto filtered = client.Post("/scheduler/filter", args.dump(), "application/json");
  REQUIRE(filtered);
  REQUIRE(filtered->status == 200);
  json kept = json::parse(filtered->body).value("NodeNames", json::array());
  if (kept.empty()) return "";
  std::string best = kept[0].get<std::string>();
  if (kept.size() > 1) {
    args["NodeNames"] = kept;
    auto scored = client.Post("/scheduler/prioritize", args.dump(), "application/json");
    REQUIRE(scored);
    REQUIRE(scored->status == 200);
    int top = -1;
    for (const auto& s : json::parse(scored->body)) {
      if (s.value("Score", 0) > top) top = s.value("Score", 0), best = s.value("Host", "");
    }
  }
  json bind = {{"PodName", name}, {"PodNamespace", "ml"}, {"PodUID", "uid-" + name}, {"Node", best}};
  auto bound = client.Post("/scheduler/bind", bind.dump(), "application/json");
  REQUIRE(bound);
  REQUIRE(bound->status == 200);
  CHECK(json::parse(bound->body).value("Error", "") == "");
  return best;
}

TEST_CASE("replay: a real serve --record replays through topofit bench replay") {
  testing::TempDir dir;
  const std::string snapshot = dir.File("snapshot.json"), record = dir.File("record.jsonl"), out = dir.File("out.json");
  REQUIRE(WriteTextFile(snapshot, kSnapshot).ok());
  {
    testing::ServeProcess serve({"--snapshot", snapshot, "--record", record});
    httplib::Client client("127.0.0.1", serve.port());
    CHECK(Schedule(client, "a", 4) == "dgx");  // The NVLink quad beats the PCIe one.
    const std::string b = Schedule(client, "b", 4), c = Schedule(client, "c", 4);
    CHECK(b != "");
    CHECK(c != "");
    CHECK(b != c);  // One went to the DGX's other quad, the other to pcie4.
    CHECK(Schedule(client, "d", 1) == "");     // 12 of 12 GPUs taken.
    REQUIRE(serve.Stop() == 0);
  }
  const auto recorded = ReadFile(record);
  REQUIRE(recorded.ok());
  int lines = 0;
  for (char ch : *recorded) lines += ch == '\n';
  // filter x4; prioritize x2 (the third 4-GPU pod has one node left, which kube-scheduler does not
  // prioritize); bind x3.
  CHECK(lines == 4 + 2 + 3);

  const std::string cmd = std::string("'") + TOPOFIT_BINARY + "' bench replay --snapshot '" + snapshot + "' --trace '" +
                          record + "' --policies topofit,kube-default,random --json '" + out + "' >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto written = ReadFile(out);
  REQUIRE(written.ok());
  json rows = json::parse(*written, nullptr, false);
  REQUIRE(!rows.is_discarded());
  if (rows.is_object() && rows.contains("policies")) rows = rows["policies"];
  REQUIRE(rows.is_array());
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) {
    INFO(r.dump());
    CHECK(r["failed_pods"].get<double>() == doctest::Approx(1));  // d, whatever the policy.
    CHECK(r["multi_gpu_pods"].get<int>() == 3);
  }
  CHECK(rows[0]["policy"] == "topofit");
  CHECK(rows[0]["multi_gpu_best_set_pct"].get<double>() == doctest::Approx(100));
}

}  // namespace
}  // namespace topofit::bench
