// topofit node's /healthz, /readyz and /metrics (node_ops.h) over the real service: the fake kubelet
// (testing/fake_kubelet.h) and the fake backend over unix sockets in a temporary directory (NodeRig,
// testing/node_rig.h, as node_plugin_test.cc). Each counter is read from the rendered exposition
// text after the code path that moves it ran; readiness is followed through registration, a backend
// gone and back, and a kubelet restart.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "base/testing/prometheus_sample.h"
#include "extender/node/plugin/node_ops.h"
#include "extender/node/plugin/node_service.h"
#include "extender/node/plugin/testing/fake_kubelet.h"
#include "extender/node/plugin/testing/node_rig.h"
#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {
namespace {

using namespace std::chrono_literals;
using testing::FakeKubelet;
using testing::TestPod;

using testing::Eventually;

using ::topofit::testing::SampleValue;

struct Recorder : ActualPublisher {
  std::mutex mu;
  int events = 0;
  Status PatchPod(const NodePod&, const std::map<std::string, std::string>&) override { return Status::Ok(); }
  void PodEvent(const NodePod&, const std::string&, const std::string&, const std::string&) override {
    std::lock_guard lock(mu);
    ++events;
  }
  Status PatchNode(const std::string&, const std::map<std::string, std::string>&) override { return Status::Ok(); }
};

struct Rig : testing::NodeRig {
  Recorder publisher;

  Rig() : NodeRig(11) {}
  ~Rig() {
    if (service) service->Stop();  // Before `publisher` goes: the service reports to it.
  }
  void StartService() {
    service = std::make_unique<NodeService>(options);
    service->SetPublisher(&publisher);
    REQUIRE(service->Start().ok());
  }
  std::string Metrics() const { return RenderNodeMetrics(service->State()); }
  double Metric(const std::string& series) const { return SampleValue(Metrics(), series); }
  double Outcome(const std::string& outcome) const {
    return Metric("topofit_node_preferred_allocations_total{outcome=\"" + outcome + "\"}");
  }
};

NodePod Planned(const std::string& name, DeviceList plan) {
  TestPod p{name, "u-" + name};
  p.containers = {{"c", int(plan.size()), plan}};
  return testing::Decoded(p);
}

NodePod Foreign(const std::string& name, int gpus) {
  TestPod p{name, "u-" + name, "n1", ""};
  p.containers = {{"c", gpus}};
  return testing::Decoded(p);
}

}  // namespace

TEST_CASE("ops: /readyz names what is missing, ready once registered, listed, reconciled, not while the backend is gone") {
  Rig rig;
  std::atomic<bool> listed{false};
  rig.service = std::make_unique<NodeService>(rig.options);
  rig.service->SetPodSource([&] { return listed.load(); });
  Probe before = Readiness(rig.service->State());
  CHECK_FALSE(before.ok);
  for (const char* missing : {"kubelet_registered:", "backend_connected:", "backend_listed:", "reconciled:", "pods_synced:"}) {
    CAPTURE(missing);
    CHECK(before.body.find(missing) != std::string::npos);
  }
  REQUIRE(rig.service->Start().ok());
  CHECK(Liveness(rig.service->State()).ok);
  // Serving, but no backend: topofit does not register to kubelet without one.
  std::this_thread::sleep_for(300ms);
  Probe no_backend = Readiness(rig.service->State());
  CHECK_FALSE(no_backend.ok);
  CHECK(no_backend.body.find("kubelet_registered:") != std::string::npos);
  CHECK(rig.Metric("topofit_node_kubelet_registered") == 0);
  CHECK(rig.Metric("topofit_node_ready") == 0);

  rig.StartBackend();
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  // Registered, listed and reconciled; only the pod source is missing.
  REQUIRE(Eventually([&] { return Readiness(rig.service->State()).body == "pods_synced: the pods of this node are not listed yet\n"; }));
  listed = true;
  Probe ready = Readiness(rig.service->State());
  CHECK(ready.ok);
  CHECK(ready.body == "ok\n");
  CHECK(rig.Metric("topofit_node_ready") == 1);
  CHECK(rig.Metric("topofit_node_kubelet_registered") == 1);
  CHECK(rig.Metric("topofit_node_backend_connected") == 1);
  CHECK(rig.Metric("topofit_node_gpus_by_health{health=\"healthy\"}") == 8);
  CHECK(rig.Metric("topofit_node_gpus_by_health{health=\"unhealthy\"}") == 0);
  CHECK(rig.Metric("topofit_node_kubelet_registrations_total") == 1);
  CHECK(rig.Metric("topofit_node_restarts_seen_total{component=\"backend\"}") == 0);

  // The backend goes away: not ready, saying so; back: ready, and its restart is counted.
  rig.backend->Stop();
  REQUIRE(Eventually([&] { return !Readiness(rig.service->State()).ok; }));
  CHECK(Readiness(rig.service->State()).body.find("backend_connected:") != std::string::npos);
  CHECK(rig.Metric("topofit_node_backend_connected") == 0);
  CHECK(rig.Metric("topofit_node_ready") == 0);
  rig.StartBackend();
  CHECK(Eventually([&] { return Readiness(rig.service->State()).ok; }));
  CHECK(rig.Metric("topofit_node_restarts_seen_total{component=\"backend\"}") == 1);

  // A kubelet restart: counted, registered again once the backend is back behind topofit.
  rig.kubelet->Restart();
  REQUIRE(Eventually([&] { return access(rig.service->registrar_path().c_str(), F_OK) == 0; }));
  rig.backend->Stop();
  rig.StartBackend();
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  CHECK(Eventually([&] { return Readiness(rig.service->State()).ok; }));
  CHECK(rig.Metric("topofit_node_restarts_seen_total{component=\"kubelet\"}") == 1);
  CHECK(rig.Metric("topofit_node_kubelet_registrations_total") == 2);
  CHECK(Liveness(rig.service->State()).ok);
}

TEST_CASE("ops: /healthz fails when a loop has not turned within its bound, and says which") {
  NodeServiceState s;
  CHECK(Liveness(s).ok);
  CHECK(Liveness(s).body == "ok\n");
  s.supervisor_idle = kSupervisorStall + 1s;
  Probe p = Liveness(s);
  CHECK_FALSE(p.ok);
  CHECK(p.body.find("supervisor loop stalled: no tick for 61s (limit 60s)") == 0);
  s.supervisor_idle = 1s;
  s.reconciler_idle = kReconcilerStall + 5s;
  p = Liveness(s);
  CHECK_FALSE(p.ok);
  CHECK(p.body == "reconciler loop stalled: no step for 185s (limit 180s)\n");
}

TEST_CASE("ops: GetPreferredAllocation outcomes, latency, Allocate, PodResources, mismatch and reconcile counters move") {
  Rig rig;
  rig.StartService();
  rig.StartBackend();
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  const std::string text = rig.Metrics();
  for (const char* outcome : {"plan", "partial_plan", "foreign", "backend_fallback", "timeout"}) CHECK(rig.Outcome(outcome) == 0);
  CHECK(SampleValue(text, "topofit_node_preferred_allocation_duration_seconds_count") == 0);
  CHECK(text.find("# TYPE topofit_node_preferred_allocation_duration_seconds histogram\n") != std::string::npos);

  // plan: the container's whole plan; one Get names the pod; Allocate forwarded, as planned.
  NodePod a = Planned("a", {FakeUuid(0), FakeUuid(1)});
  rig.service->pods().Set({a});
  REQUIRE(rig.kubelet->Admit(a).ok());
  CHECK(rig.Outcome("plan") == 1);
  CHECK(rig.Metric("topofit_node_preferred_allocation_duration_seconds_count") == 1);
  CHECK(rig.Metric("topofit_node_preferred_allocation_duration_seconds_bucket{le=\"+Inf\"}") == 1);
  CHECK(rig.Metric("topofit_node_allocate_calls_total") == 1);
  CHECK(rig.Metric("topofit_node_allocations_as_planned_total") == 1);
  CHECK(rig.Metric("topofit_node_podresources_calls_total{method=\"Get\"}") == 1);
  rig.kubelet->Remove(a.uid);

  // foreign: no plan of that size on the node.
  NodePod f = Foreign("f", 1);
  rig.service->pods().Set({f});
  REQUIRE(rig.kubelet->Admit(f).ok());
  CHECK(rig.Outcome("foreign") == 1);
  rig.kubelet->Remove(f.uid);

  // backend_fallback: a pending planned pod of the same size, which kubelet is not admitting.
  NodePod p = Planned("p", {FakeUuid(2), FakeUuid(3)});
  NodePod g = Foreign("g", 2);
  rig.service->pods().Set({p, g});
  REQUIRE(rig.kubelet->Admit(g).ok());
  CHECK(rig.Outcome("backend_fallback") == 1);
  rig.kubelet->Remove(g.uid);

  // Kubelet's rate limit refuses two Gets: asked again, the plan still followed.
  NodePod r = Planned("r", {FakeUuid(6), FakeUuid(7)});
  rig.service->pods().Set({r});
  const double gets = rig.Metric("topofit_node_podresources_calls_total{method=\"Get\"}");
  rig.kubelet->RefuseGets(2);
  REQUIRE(rig.kubelet->Admit(r).ok());
  CHECK(rig.Outcome("plan") == 2);
  CHECK(rig.Metric("topofit_node_podresources_rate_limited_total") == 2);
  CHECK(rig.Metric("topofit_node_podresources_calls_total{method=\"Get\"}") == gets + 3);

  // partial_plan: a planned GPU gone unhealthy; the reconciler then finds the pod off its plan.
  rig.backend->SetHealthy(FakeUuid(5), false);
  REQUIRE(Eventually([&] { return rig.Metric("topofit_node_gpus_by_health{health=\"unhealthy\"}") == 1; }));
  NodePod q = Planned("q", {FakeUuid(4), FakeUuid(5)});
  rig.service->pods().Set({r, q});
  REQUIRE(Eventually([&] { return rig.kubelet->Available().size() == 5; }));
  REQUIRE(rig.kubelet->Admit(q).ok());
  CHECK(rig.Outcome("partial_plan") == 1);
  CHECK(Eventually([&] { return rig.Metric("topofit_node_plan_mismatches_total") == 1; }));
  {
    std::lock_guard lock(rig.publisher.mu);
    CHECK(rig.publisher.events == 1);  // The same event as the Warning TopofitGpuSetMismatch.
  }
  CHECK(rig.Metric("topofit_node_allocate_calls_total") == 5);
  CHECK(rig.Metric("topofit_node_allocate_errors_total") == 0);
  CHECK(rig.Metric("topofit_node_preferred_allocation_duration_seconds_count") == 5);
  CHECK(rig.Outcome("timeout") == 0);

  // The reconciler: runs, their duration, the List calls behind them.
  CHECK(Eventually([&] { return rig.Metric("topofit_node_reconciles_total") >= 3; }));
  CHECK(rig.Metric("topofit_node_reconcile_duration_seconds_count") >= 3);
  CHECK(rig.Metric("topofit_node_podresources_calls_total{method=\"List\"}") >= 3);
  CHECK(rig.Metric("topofit_node_reconcile_errors_total") == 0);
}

TEST_CASE("ops: a GetPreferredAllocation cut by --preferred-timeout counts as timeout") {
  Rig rig;
  rig.options.preferred_timeout = 30ms;
  rig.StartService();
  rig.StartBackend();
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  NodePod a = Planned("a", {FakeUuid(0), FakeUuid(1)});
  rig.service->pods().Set({a});
  rig.kubelet->DelayGets(300ms);  // Kubelet's answer comes after the call's budget.
  REQUIRE(rig.kubelet->Admit(a).ok());
  CHECK(rig.Outcome("timeout") == 1);
  CHECK(rig.Outcome("plan") == 0);
  CHECK(rig.Metric("topofit_node_preferred_allocation_duration_seconds_count") == 1);
}

TEST_CASE("ops: a choice by creation order (kubelet refusing every Get) and a failed backend answer are counted") {
  Rig rig;
  rig.StartService();
  rig.StartBackend();
  REQUIRE(rig.kubelet->WaitForDevices(10s));
  // Two pending 1-GPU plans; kubelet's rate limit refuses every Get: the earlier-created is answered.
  TestPod first{"first", "u-first"};
  first.created = "2026-11-23T00:00:00Z";
  first.containers = {{"c", 1, {FakeUuid(0)}}};
  TestPod second{"second", "u-second"};
  second.created = "2026-11-23T00:00:05Z";
  second.containers = {{"c", 1, {FakeUuid(1)}}};
  NodePod a = testing::Decoded(first), b = testing::Decoded(second);
  rig.service->pods().Set({a, b});
  rig.kubelet->RefuseGets(1000000);
  REQUIRE(rig.kubelet->Admit(a).ok());
  CHECK(rig.Metric("topofit_node_preferred_allocations_tentative_total") == 1);
  CHECK(rig.Outcome("plan") == 1);
  CHECK(rig.Metric("topofit_node_podresources_rate_limited_total") >= 2);
  rig.kubelet->RefuseGets(0);
  rig.kubelet->Remove(a.uid);
  // The backend is gone while a pod no plan fits is admitted: its GetPreferredAllocation fails,
  // topofit answers alone, and the Allocate waits for the backend to come back.
  NodePod f = Foreign("f", 2);
  rig.service->pods().Set({f});
  rig.backend->Stop();
  auto admission = std::async(std::launch::async, [&] { return rig.kubelet->Admit(f); });
  REQUIRE(Eventually([&] { return rig.Metric("topofit_node_backend_preferred_errors_total") == 1; }));
  rig.StartBackend();
  Status st = admission.get();
  CHECK_MESSAGE(st.ok(), st.error());
  CHECK(rig.Outcome("foreign") == 1);
  CHECK(rig.Metric("topofit_node_allocate_errors_total") == 0);
}

TEST_CASE("ops: Allocate errors and failed reconciles are counted") {
  Rig rig;
  rig.options.pod_resources_socket = rig.root + "/pod-resources/absent.sock";
  rig.StartService();
  // No backend has registered: Allocate fails, and that is the backend's error to kubelet.
  v1beta1::AllocateRequest req;
  req.add_container_requests()->add_devices_ids(FakeUuid(0));
  v1beta1::AllocateResponse resp;
  grpc::Status st = rig.service->front().Allocate(nullptr, &req, &resp);
  CHECK_FALSE(st.ok());
  CHECK(rig.Metric("topofit_node_allocate_calls_total") == 1);
  CHECK(rig.Metric("topofit_node_allocate_errors_total") == 1);
  // No PodResources socket answers: every reconcile fails, none succeeds, /readyz says so.
  CHECK(Eventually([&] { return rig.Metric("topofit_node_reconcile_errors_total") >= 2; }));
  CHECK(rig.Metric("topofit_node_reconciles_total") == 0);
  CHECK(Readiness(rig.service->State()).body.find("reconciled: no PodResources List has answered yet") != std::string::npos);
}

}  // namespace topofit::node
