// GetPreferredAllocation latency with 100 pods on the node, as kubelet sees it: a gRPC call on the
// front plugin's unix socket, the matcher asking the fake kubelet's PodResources Get to tell the
// candidates apart. The node (8 fake GPUs): 4 running pods holding a GPU each, 4 pending pods of
// equal size (1) with disjoint plans, the one being admitted the last in creation order (the
// matcher's worst case: it asks Get about all four, the earliest alone, then the other three
// together), and 92 completed pods with plans (scanned and ignored). The call does not change
// state, so it is repeated; p50/p99 are the counters; `cpu_us` is the process's CPU time (every
// thread: front server, fake kubelet, client) per call.
// BM_PartsOverSockets times, on the same rig, the parts the call is made of: `floor_*` an empty RPC
// on the same socket (GetDevicePluginOptions: kubelet's round trip to the front plugin and nothing
// else), `gets_*` the matcher's four PodResources Gets as it asks them (PodResourcesClient::Views:
// one, then three together) from the benchmark's thread, `serial_*` the same four one after another.
//   build/extender/node/plugin/front_plugin_perftest --benchmark_repetitions=3
// BM_Match is the same decision without sockets (views answered in memory).
#include <benchmark/benchmark.h>

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "base/files.h"
#include "base/log.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "extender/node/plugin/testing/fake_backend.h"
#include "extender/node/plugin/grpc_util.h"
#include "extender/node/plugin/matcher.h"
#include "extender/node/plugin/node_service.h"
#include "extender/node/plugin/podresources_client.h"
#include "extender/node/plugin/testing/fake_kubelet.h"
#include "extender/node/plugin/testing/pod_json.h"
#include "test/util/temp_dir.h"

namespace topofit::node {
namespace {

using namespace std::chrono_literals;

std::vector<NodePod> HundredPods() {
  std::vector<NodePod> pods;
  auto pod = [&](int i, std::string phase, int gpu) {
    testing::TestPod p;
    p.name = "p" + std::to_string(i);
    p.uid = "u" + std::to_string(i);
    char ts[32];
    std::snprintf(ts, sizeof ts, "2026-11-23T00:%02d:%02dZ", i / 60, i % 60);
    p.created = ts;
    p.phase = std::move(phase);
    p.containers = {{"main", 1, {FakeUuid(gpu)}}};
    return testing::Decoded(p);
  };
  for (int i = 0; i < 92; ++i) pods.push_back(pod(i, "Succeeded", i % 8));
  for (int i = 92; i < 96; ++i) pods.push_back(pod(i, "Running", i - 92));
  for (int i = 96; i < 100; ++i) pods.push_back(pod(i, "Pending", i - 92));
  return pods;
}

void Report(benchmark::State& state, const std::string& prefix, std::vector<double>& us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  state.counters[prefix + "p50_us"] = us[us.size() / 2];
  state.counters[prefix + "p99_us"] = us[us.size() * 99 / 100];
  if (prefix.empty()) state.counters["max_us"] = us.back();
}

double ProcessCpuUs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// `parts`: time the empty RPC and the Gets instead of GetPreferredAllocation, same rig.
void BM_OverSockets(benchmark::State& state, bool parts) {
  SetLogLevel(LogLevel::kWarn);
  topofit::testing::TempDir temp("tfb", "/tmp");  // Short: unix socket paths.
  const std::string& root = temp.path();
  std::string dir = root + "/device-plugins", pr = root + "/pod-resources/kubelet.sock";
  std::filesystem::create_directories(dir);
  std::filesystem::create_directories(root + "/pod-resources");
  {
    testing::FakeKubelet kubelet(dir, pr, 1);
    if (!kubelet.Start().ok()) return state.SkipWithError("fake kubelet");
    NodeOptions o;
    o.node_name = "n1";
    o.device_plugin_dir = dir;
    o.pod_resources_socket = pr;
    o.reconcile_interval = 1h;
    NodeService service(o);
    if (!service.Start().ok()) return state.SkipWithError("service");
    auto backend = FakeBackend::FromTopo(*ReadFile(std::string(TOPOFIT_SOURCE_DIR) +
                                                   "/topology/testdata/topo/h100-8-nv18-8nic.txt"));
    (*backend)->Start(dir + "/nvidia-gpu.sock");
    (*backend)->Register(service.registrar_path(), "nvidia.com/gpu");
    if (!kubelet.WaitForDevices(10s)) return state.SkipWithError("no devices");
    std::vector<NodePod> pods = HundredPods();
    service.pods().Set(pods);
    // The running pods go through kubelet (so the ledger and PodResources know them)...
    for (int i = 92; i < 96; ++i) kubelet.Admit(pods[i]);
    // ... and the last pending one is being admitted: kubelet knows it, it holds nothing yet.
    testing::TestPod admitting{"p99", "u99"};
    admitting.containers = {{"main", 0}};
    kubelet.Admit(testing::Decoded(admitting));
    auto stub = v1beta1::DevicePlugin::NewStub(UnixChannel(service.front_path()));
    v1beta1::PreferredAllocationRequest req;
    auto* c = req.add_container_requests();
    for (const auto& id : kubelet.Available()) c->add_available_deviceids(id);
    c->set_allocation_size(1);
    PodResourcesClient pod_resources(pr, "nvidia.com/gpu");
    std::vector<ViewQuery> first = {{pods[96].namespace_, pods[96].name, "main"}}, wave;
    for (int i = 97; i < 100; ++i) wave.push_back({pods[i].namespace_, pods[i].name, "main"});
    std::vector<double> us, floor_us, gets_us, serial_us;
    double cpu_us = 0;
    auto since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    };
    for (auto _ : state) {
      if (parts) {
        auto t0 = std::chrono::steady_clock::now();
        grpc::ClientContext floor_ctx;
        v1beta1::Empty empty;
        v1beta1::DevicePluginOptions options;
        grpc::Status st = stub->GetDevicePluginOptions(&floor_ctx, empty, &options);
        floor_us.push_back(since(t0));
        t0 = std::chrono::steady_clock::now();
        std::vector<KubeletView> views = pod_resources.Views(first, 1s);
        if (views[0] == KubeletView::kNotFound) views = pod_resources.Views(wave, 1s);
        gets_us.push_back(since(t0));
        t0 = std::chrono::steady_clock::now();
        KubeletView last = KubeletView::kUnknown;
        for (const ViewQuery& q : {first[0], wave[0], wave[1], wave[2]}) last = pod_resources.Views({q}, 1s)[0];
        serial_us.push_back(since(t0));
        if (!st.ok() || views.back() != KubeletView::kAdmitting || last != KubeletView::kAdmitting) {
          state.SkipWithError("empty RPC or Gets failed");
          break;
        }
        continue;
      }
      double cpu0 = ProcessCpuUs();
      auto t0 = std::chrono::steady_clock::now();
      grpc::ClientContext ctx;
      v1beta1::PreferredAllocationResponse resp;
      grpc::Status st = stub->GetPreferredAllocation(&ctx, req, &resp);
      us.push_back(since(t0));
      cpu_us += ProcessCpuUs() - cpu0;
      if (!st.ok() || resp.container_responses(0).deviceids(0) != FakeUuid(7)) {
        state.SkipWithError("wrong answer");
        break;
      }
    }
    Report(state, "", us);
    Report(state, "floor_", floor_us);
    Report(state, "gets_", gets_us);
    Report(state, "serial_", serial_us);
    if (!us.empty()) state.counters["cpu_us"] = cpu_us / static_cast<double>(us.size());
    service.Stop();
    (*backend)->Stop();
    kubelet.Stop();
  }
}
void BM_GetPreferredAllocationOverSockets(benchmark::State& state) { BM_OverSockets(state, false); }
BENCHMARK(BM_GetPreferredAllocationOverSockets)->Unit(benchmark::kMicrosecond)->Iterations(2000);
void BM_PartsOverSockets(benchmark::State& state) { BM_OverSockets(state, true); }
BENCHMARK(BM_PartsOverSockets)->Unit(benchmark::kMicrosecond)->Iterations(2000);

void BM_Match(benchmark::State& state) {
  std::vector<NodePod> pods = HundredPods();
  Ledger ledger;
  for (int i = 92; i < 96; ++i) ledger.Record(pods[i].uid, "main", {FakeUuid(i - 92)});
  PreferredRequest req{{FakeUuid(4), FakeUuid(5), FakeUuid(6), FakeUuid(7)}, {}, 1};
  ViewsFn view = OneByOne([](const NodePod& p, const std::string&) {
    return p.name == "p99" ? KubeletView::kAdmitting : KubeletView::kNotFound;
  });
  for (auto _ : state) {
    MatchResult m = Match(req, "n1", pods, ledger, view, nullptr);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_Match)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace topofit::node
