// Contract tests of `topofit node` over real unix sockets in a temporary directory: the fake kubelet
// (testing/fake_kubelet.h: kubelet's per-container algorithm with random fill, serial admission,
// socket wipe on restart, PodResources), topofit's NodeService (registrar, front plugin, matcher,
// ledger, reconciler) and a fake backend registering to topofit's registrar as the NVIDIA plugin does.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "base/files.h"
#include "extender/node/plugin/testing/fake_backend.h"
#include "extender/node/plugin/node_service.h"
#include "extender/node/plugin/podresources_client.h"
#include "extender/node/plugin/testing/fake_kubelet.h"
#include "extender/node/plugin/testing/node_rig.h"
#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {
namespace {

using namespace std::chrono_literals;
using testing::FakeKubelet;
using testing::TestContainer;
using testing::TestPod;

using testing::Eventually;
const std::string& kTopo = testing::kRigTopo;

struct Rig : testing::NodeRig {
  using NodeRig::NodeRig;

  // The NVIDIA stand-in, registering to topofit's registrar; then topofit registers to kubelet.
  void StartAll() {
    service = std::make_unique<NodeService>(options);
    REQUIRE(service->Start().ok());
    StartBackend();
    REQUIRE(kubelet->WaitForDevices(10s));
  }
};

DeviceList Sorted(DeviceList d) {
  std::sort(d.begin(), d.end());
  return d;
}

void CheckNoDoubleHolding(const FakeKubelet& kubelet) {
  std::map<std::string, std::string> holder;
  for (const auto& [key, devices] : kubelet.Holdings()) {
    for (const auto& d : devices) {
      auto [it, fresh] = holder.emplace(d, key.first);
      CHECK_MESSAGE((fresh || it->second == key.first), d << " held by two pods");
    }
  }
}

// Records what the reconciler publishes.
struct RecordingPublisher : ActualPublisher {
  std::mutex mu;
  std::map<std::string, std::string> actual;  // uid -> gpu-actual
  std::vector<std::string> events;              // "reason: message"
  std::string health;
  Status PatchPod(const NodePod& pod, const std::map<std::string, std::string>& annotations) override {
    std::lock_guard lock(mu);
    actual[pod.uid] = annotations.at(kGpuActualAnnotation);
    return Status::Ok();
  }
  void PodEvent(const NodePod& pod, const std::string&, const std::string& reason, const std::string& message) override {
    std::lock_guard lock(mu);
    events.push_back(pod.name + " " + reason + ": " + message);
  }
  Status PatchNode(const std::string&, const std::map<std::string, std::string>& annotations) override {
    std::lock_guard lock(mu);
    health = annotations.at(kGpuHealthAnnotation);
    return Status::Ok();
  }
};

}  // namespace

TEST_CASE("contract: gpu-actual is published from kubelet's truth, a deviation raises one mismatch Event") {
  RecordingPublisher pub;  // Outlives the rig: its service reports to it until stopped.
  Rig rig(9);
  rig.service = std::make_unique<NodeService>(rig.options);
  rig.service->SetPublisher(&pub);
  REQUIRE(rig.service->Start().ok());
  rig.StartBackend();
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  NodePod good = testing::Decoded({"good", "ug", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"c", 2, {FakeUuid(0), FakeUuid(1)}}}});
  NodePod bad = testing::Decoded({"bad", "ub", "n1", "n1", "2026-11-23T00:00:01Z", 0, {{"c", 2, {FakeUuid(2), FakeUuid(3)}}}});
  rig.service->pods().Set({good, bad});
  rig.backend->SetHealthy(FakeUuid(3), false);  // Kubelet cannot follow bad's plan.
  REQUIRE(Eventually([&] { return rig.kubelet->Available().size() == 7; }));
  REQUIRE(rig.kubelet->Admit(good).ok());
  REQUIRE(rig.kubelet->Admit(bad).ok());
  auto bad_got = rig.kubelet->Holdings().at({"ub", "c"});
  CHECK(Eventually([&] {
    std::lock_guard lock(pub.mu);
    return pub.actual.size() == 2 && pub.events.size() == 1 && !pub.health.empty();
  }));
  std::lock_guard lock(pub.mu);
  auto parsed = k8s::ParseGpuAssignment(pub.actual["ug"]);
  REQUIRE(parsed.ok());
  CHECK(*parsed->Find("c") == Sorted({FakeUuid(0), FakeUuid(1)}));
  CHECK(*k8s::ParseGpuAssignment(pub.actual["ub"])->Find("c") == bad_got);
  CHECK(pub.events[0].find("bad TopofitGpuSetMismatch: GPUs differ from topofit's plan: c: planned ") == 0);
  CHECK(pub.health.find(FakeUuid(3)) != std::string::npos);
  CHECK(rig.service->mismatches() == 1);
}

TEST_CASE("contract: the backend registers to topofit, topofit to kubelet as nvidia.com/gpu, devices relayed") {
  Rig rig(1);
  rig.StartAll();
  CHECK(rig.kubelet->endpoint() == "topofit-nvidia-gpu.sock");
  CHECK(Eventually([&] { return rig.service->registered(); }));
  DeviceList expected;
  for (int i = 0; i < 8; ++i) expected.push_back(FakeUuid(i));
  CHECK(Sorted(rig.kubelet->Available()) == Sorted(expected));
  // A backend registering the wrong resource or version is refused with the reason.
  auto text = ReadFile(kTopo);
  auto other = FakeBackend::FromTopo(*text);
  REQUIRE(other->get()->Start(rig.dir + "/other.sock").ok());
  Status st = other->get()->Register(rig.service->registrar_path(), "example.com/foo");
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find("resource \"example.com/foo\" is not served here (expected nvidia.com/gpu)") != std::string::npos);
}

TEST_CASE("contract: Allocate is forwarded unchanged, so the container's env names kubelet's own IDs") {
  Rig rig(2);
  rig.StartAll();
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"c", 2, {FakeUuid(5), FakeUuid(6)}}}});
  rig.service->pods().Set({pod});
  REQUIRE(rig.kubelet->Admit(pod).ok());
  auto held = rig.kubelet->Holdings().at({"u1", "c"});
  CHECK(held == Sorted({FakeUuid(5), FakeUuid(6)}));
  CHECK(rig.kubelet->Envs("u1", "c").at("NVIDIA_VISIBLE_DEVICES") == held[0] + "," + held[1]);
}

TEST_CASE("contract: PodResources Gets asked together: every view right, rate-limited ones asked again while time allows") {
  Rig rig(3);
  rig.StartAll();
  NodePod holding = testing::Decoded({"holding", "uh", "n1", "n1", "2026-11-23T00:00:00Z", 0, {{"main", 1, {FakeUuid(0)}}}});
  testing::TestPod admitting{"admitting", "ua"};
  admitting.containers = {{"main", 0}};  // Known to kubelet, holds nothing: the pod being admitted.
  rig.service->pods().Set({holding});
  REQUIRE(rig.kubelet->Admit(holding).ok());
  REQUIRE(rig.kubelet->Admit(testing::Decoded(admitting)).ok());
  PodResourcesClient client(rig.pr, "nvidia.com/gpu");
  std::vector<ViewQuery> queries;
  std::vector<KubeletView> want;
  for (int i = 0; i < 3; ++i) {
    queries.push_back({"default", "holding", "main"});
    want.push_back(KubeletView::kHasDevices);
    queries.push_back({"default", "admitting", "main"});
    want.push_back(KubeletView::kAdmitting);
    queries.push_back({"default", "unknown", "main"});
    want.push_back(KubeletView::kNotFound);
  }
  CHECK(client.Views(queries, 1s) == want);
  CHECK(client.Views({}, 1s).empty());
  // kubelet's bucket holds 2 of 9: the other 7 are refused, asked again after a pause, answered.
  rig.kubelet->LimitPodResources(100, 2);
  CHECK(client.Views(queries, 2s) == want);
  CHECK(rig.kubelet->pod_resources_refused() > 0);
  // One token a second (the reconciler's List takes from it too): at most one is answered, the rest
  // are unknown once their pauses pass the deadline.
  rig.kubelet->LimitPodResources(1, 1);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<KubeletView> got = client.Views({queries[0], queries[1], queries[2]}, 200ms);
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  REQUIRE(got.size() == 3);
  int answered = 0;
  for (int i = 0; i < 3; ++i) {
    if (got[i] == KubeletView::kUnknown) continue;
    ++answered;
    CHECK(got[i] == want[i]);
  }
  CHECK(answered <= 1);
  // No socket: every view unknown.
  CHECK(PodResourcesClient("", "nvidia.com/gpu").Views(queries, 1s) == std::vector<KubeletView>(9, KubeletView::kUnknown));
}

TEST_CASE("contract: kubelet admits a pod before topofit's pod cache has it: the answer waits for it, then the plan") {
  Rig rig(7);
  rig.StartAll();
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"c", 2, {FakeUuid(5), FakeUuid(6)}}}});
  // The pod reaches the cache 50 ms after kubelet starts admitting it (its watch is behind).
  auto late = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(50ms);
    rig.service->pods().Set({pod});
  });
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(rig.kubelet->Admit(pod).ok());
  auto took = std::chrono::steady_clock::now() - t0;
  late.wait();
  CHECK(rig.kubelet->Holdings().at({"u1", "c"}) == Sorted({FakeUuid(5), FakeUuid(6)}));
  CHECK(rig.service->front().counters().planned == 1);
  CHECK(took < 500ms);
  // A pod that never reaches the cache (a static pod): the backend's answer after the wait, no failure.
  NodePod never = testing::Decoded({"s", "u2", "n1", "", "2026-11-23T00:00:01Z", 0, {{"c", 1, {}}}});
  t0 = std::chrono::steady_clock::now();
  REQUIRE(rig.kubelet->Admit(never).ok());
  took = std::chrono::steady_clock::now() - t0;
  CHECK(rig.kubelet->Holdings().at({"u2", "c"}).size() == 1);
  CHECK(took >= 450ms);
  CHECK(took < 1500ms);
  // A foreign pod in the cache that kubelet is admitting is answered without the wait.
  NodePod foreign = testing::Decoded({"f", "u3", "n1", "", "2026-11-23T00:00:02Z", 0, {{"c", 1, {}}}});
  rig.service->pods().Set({pod, foreign});
  t0 = std::chrono::steady_clock::now();
  REQUIRE(rig.kubelet->Admit(foreign).ok());
  took = std::chrono::steady_clock::now() - t0;
  CHECK(took < 300ms);
}

TEST_CASE("contract: bursts of 50 pods of mixed sizes, equal sizes interleaved, all get their plans, none double") {
  Rig rig(3);
  rig.StartAll();
  std::mt19937_64 rng(3);
  const int sizes[] = {1, 2, 1, 4, 2, 1, 8, 2};
  int total_containers = 0, got_plan = 0, offered = 0;
  std::vector<std::chrono::microseconds> admit_times;
  for (int burst = 0; burst < 3; ++burst) {
    // 50 pods to place; the extender stand-in plans disjoint random sets from free GPUs as they free up.
    std::vector<TestPod> queue;
    for (int i = 0; i < 50; ++i) {
      TestPod p;
      p.name = "b" + std::to_string(burst) + "-p" + std::to_string(i);
      p.uid = "uid-" + p.name;
      p.created = "2026-11-23T00:0" + std::to_string(burst) + ":0" + std::to_string(i % 3) + "Z";
      p.plan_time = i;
      int k = sizes[rng() % 8];
      if (i % 10 == 3 && k >= 2) {
        p.containers = {{"main", k / 2}, {"aux", k - k / 2}};
      } else if (i % 10 == 7 && k >= 2) {
        p.containers = {{"init", k / 2, {}, true}, {"main", k}};
      } else {
        p.containers = {{"main", k}};
      }
      queue.push_back(p);
    }
    std::vector<NodePod> all;
    std::set<std::string> running;
    std::map<std::string, NodePod> by_uid;
    size_t next = 0;
    while (next < queue.size()) {
      // Plan the next pods while their sets fit in the free GPUs.
      std::set<std::string> used;
      for (const auto& [key, devices] : rig.kubelet->Holdings()) used.insert(devices.begin(), devices.end());
      DeviceList free;
      for (int g = 0; g < 8; ++g) {
        if (!used.count(FakeUuid(g))) free.push_back(FakeUuid(g));
      }
      std::shuffle(free.begin(), free.end(), rng);
      std::vector<NodePod> wave;
      while (next < queue.size()) {
        TestPod p = queue[next];
        int need = 0;
        for (const auto& c : p.containers) need += c.init ? 0 : c.gpus;
        if (need > static_cast<int>(free.size())) break;
        DeviceList set(free.end() - need, free.end());
        free.resize(free.size() - need);
        size_t at = 0;
        for (auto& c : p.containers) {
          if (!c.init) c.plan = DeviceList(set.begin() + at, set.begin() + at + c.gpus), at += c.gpus;
        }
        for (auto& c : p.containers) {
          if (c.init) c.plan = DeviceList(set.begin(), set.begin() + c.gpus);
        }
        NodePod np = testing::Decoded(p);
        wave.push_back(np);
        all.push_back(np);
        by_uid[np.uid] = np;
        ++next;
      }
      rig.service->pods().Set(all);
      // Kubelet admits the wave in its own order, not the bind order.
      std::shuffle(wave.begin(), wave.end(), rng);
      for (const auto& pod : wave) {
        auto t0 = std::chrono::steady_clock::now();
        Status st = rig.kubelet->Admit(pod);
        admit_times.push_back(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0));
        REQUIRE_MESSAGE(st.ok(), pod.name << ": " << st.error());
        running.insert(pod.uid);
        auto holdings = rig.kubelet->Holdings();
        for (const auto& c : pod.containers) {
          ++total_containers;
          ++offered;  // Plans are disjoint from everything held and all GPUs are healthy.
          DeviceList plan = Sorted(*pod.plan->Find(c.name));
          if (holdings.at({pod.uid, c.name}) == plan) ++got_plan;
          else FAIL_CHECK(pod.name << "/" << c.name << " missed its plan");
        }
        CheckNoDoubleHolding(*rig.kubelet);
      }
      // Half of what runs completes; kubelet frees it, the pod turns Succeeded.
      std::vector<std::string> r(running.begin(), running.end());
      std::shuffle(r.begin(), r.end(), rng);
      for (size_t i = 0; i < (r.size() + 1) / 2; ++i) {
        rig.kubelet->Remove(r[i]);
        running.erase(r[i]);
        for (auto& p : all) {
          if (p.uid == r[i]) p.phase = "Succeeded";
        }
      }
      rig.service->pods().Set(all);
    }
    for (const auto& uid : running) rig.kubelet->Remove(uid);
  }
  std::sort(admit_times.begin(), admit_times.end());
  MESSAGE("containers " << total_containers << ", got their plan " << got_plan << " of " << offered
                        << "; pod admission through the sockets: median " << admit_times[admit_times.size() / 2].count()
                        << " us, p99 " << admit_times[admit_times.size() * 99 / 100].count() << " us");
  CHECK(total_containers >= 150);
  CHECK(got_plan == offered);
  CHECK(rig.service->front().counters().unplanned == 0);
}

TEST_CASE("contract: the reconciler makes the ledger kubelet's truth, foreign pods included") {
  Rig rig(4);
  rig.StartAll();
  NodePod planned = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                      {{"c", 2, {FakeUuid(0), FakeUuid(1)}}}});
  TestPod f{"foreign", "uf", "n1", ""};
  f.containers = {{"c", 2}};
  NodePod foreign = testing::Decoded(f);
  rig.service->pods().Set({planned, foreign});
  REQUIRE(rig.kubelet->Admit(foreign).ok());
  // The foreign pod kept off p's planned GPUs.
  auto fh = rig.kubelet->Holdings().at({"uf", "c"});
  CHECK(std::find(fh.begin(), fh.end(), FakeUuid(0)) == fh.end());
  CHECK(std::find(fh.begin(), fh.end(), FakeUuid(1)) == fh.end());
  REQUIRE(rig.kubelet->Admit(planned).ok());
  CHECK(rig.kubelet->Holdings().at({"u1", "c"}) == Sorted({FakeUuid(0), FakeUuid(1)}));
  // The reconciler names the foreign pod's holder from PodResources.
  CHECK(Eventually([&] {
    Ledger l = rig.service->front().LedgerCopy();
    std::map<testing::KubeletModel::Key, DeviceList> got;
    for (const auto& e : l.entries()) got[{e.pod_uid, e.container}] = e.devices;
    auto truth = rig.kubelet->Holdings();
    std::map<testing::KubeletModel::Key, DeviceList> want(truth.begin(), truth.end());
    return got == want && l.entries().size() == 2 &&
           std::all_of(l.entries().begin(), l.entries().end(), [](const LedgerEntry& e) { return e.confirmed; });
  }));
}

TEST_CASE("contract: a planned GPU gone unhealthy, the pod keeps the rest of its plan, admission never fails") {
  Rig rig(5);
  rig.StartAll();
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"c", 4, {FakeUuid(0), FakeUuid(1), FakeUuid(2), FakeUuid(3)}}}});
  rig.service->pods().Set({pod});
  rig.backend->SetHealthy(FakeUuid(2), false);
  REQUIRE(Eventually([&] { return rig.kubelet->Available().size() == 7; }));
  REQUIRE(rig.kubelet->Admit(pod).ok());
  DeviceList got = rig.kubelet->Holdings().at({"u1", "c"});
  CHECK(got.size() == 4);
  for (int g : {0, 1, 3}) CHECK(std::find(got.begin(), got.end(), FakeUuid(g)) != got.end());
  CHECK(rig.service->front().counters().partial == 1);
}

TEST_CASE("contract: kubelet restart wipes the sockets, topofit and the backend come back and plans hold") {
  Rig rig(6);
  rig.StartAll();
  REQUIRE(Eventually([&] { return rig.service->registered(); }));
  auto t0 = std::chrono::steady_clock::now();
  rig.kubelet->Restart();
  // The NVIDIA plugin re-registers when it sees its registration socket re-created; the fake backend
  // here is told to, once topofit's registrar socket is back.
  REQUIRE(Eventually([&] { return access(rig.service->registrar_path().c_str(), F_OK) == 0; }));
  rig.backend->Stop();
  REQUIRE(rig.backend->Start(rig.dir + "/nvidia-gpu.sock").ok());
  REQUIRE(rig.backend->Register(rig.service->registrar_path(), "nvidia.com/gpu").ok());
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  auto recovered = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  MESSAGE("kubelet restart to devices back: " << recovered.count() << " ms");
  CHECK(rig.kubelet->registrations() == 2);
  // topofit counts a registration once kubelet's Register call returns; kubelet may list the devices
  // before that.
  CHECK(Eventually([&] { return rig.service->kubelet_registrations() == 2; }));
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"c", 2, {FakeUuid(3), FakeUuid(7)}}}});
  rig.service->pods().Set({pod});
  REQUIRE(rig.kubelet->Admit(pod).ok());
  CHECK(rig.kubelet->Holdings().at({"u1", "c"}) == Sorted({FakeUuid(3), FakeUuid(7)}));
}

TEST_CASE("contract: a backend restart during admission, Allocate waits for it, no admission fails") {
  Rig rig(7);
  rig.StartAll();
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"c", 2, {FakeUuid(4), FakeUuid(5)}}}});
  rig.service->pods().Set({pod});
  rig.backend->Stop();
  auto admission = std::async(std::launch::async, [&] { return rig.kubelet->Admit(pod); });
  std::this_thread::sleep_for(300ms);
  REQUIRE(rig.backend->Start(rig.dir + "/nvidia-gpu.sock").ok());
  REQUIRE(rig.backend->Register(rig.service->registrar_path(), "nvidia.com/gpu").ok());
  Status st = admission.get();
  CHECK_MESSAGE(st.ok(), st.error());
  CHECK(rig.kubelet->Holdings().at({"u1", "c"}) == Sorted({FakeUuid(4), FakeUuid(5)}));
}

TEST_CASE("contract: --backend-socket dials a backend that never registers, once it answers") {
  Rig rig(10);
  rig.options.backend_socket = rig.dir + "/nvidia-gpu.sock";
  rig.service = std::make_unique<NodeService>(rig.options);
  REQUIRE(rig.service->Start().ok());  // The backend is not there yet.
  auto text = ReadFile(kTopo);
  rig.backend = std::move(FakeBackend::FromTopo(*text).value());
  REQUIRE(rig.backend->Start(rig.dir + "/nvidia-gpu.sock").ok());
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  CHECK(rig.kubelet->Available().size() == 8);
}

TEST_CASE("contract: an in-process backend (the test build's --fake-backend) registers through the registrar") {
  Rig rig(8);
  rig.service = std::make_unique<NodeService>(rig.options);
  auto text = ReadFile(kTopo);
  REQUIRE(text.ok());
  rig.service->SetLocalBackend(InProcessBackend(std::move(FakeBackend::FromTopo(*text).value()),
                                                rig.dir + "/topofit-fake-gpu.sock"));
  REQUIRE(rig.service->Start().ok());
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  CHECK(rig.kubelet->Available().size() == 8);
  NodePod pod = testing::Decoded({"p", "u1", "n1", "n1", "2026-11-23T00:00:00Z", 0,
                                  {{"c", 4, {FakeUuid(1), FakeUuid(3), FakeUuid(5), FakeUuid(7)}}}});
  rig.service->pods().Set({pod});
  REQUIRE(rig.kubelet->Admit(pod).ok());
  CHECK(rig.kubelet->Holdings().at({"u1", "c"}) == Sorted({FakeUuid(1), FakeUuid(3), FakeUuid(5), FakeUuid(7)}));
  // Also with kubelet restarts: the in-process fake backend re-registers by itself.
  rig.kubelet->Restart();
  REQUIRE(Eventually([&] { return rig.kubelet->registrations() == 2 && !rig.kubelet->Available().empty(); }));
}

}  // namespace topofit::node
