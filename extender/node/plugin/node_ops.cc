#include "extender/node/plugin/node_ops.h"

#include <fmt/format.h>

namespace topofit::node {
namespace {

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

void Counter(std::string& out, std::string_view name, std::string_view help, uint64_t value) {
  AppendFamily(out, name, "counter", help);
  out += fmt::format("{} {}\n", name, value);
}

void Gauge(std::string& out, std::string_view name, std::string_view help, int64_t value) {
  AppendFamily(out, name, "gauge", help);
  out += fmt::format("{} {}\n", name, value);
}

}  // namespace

Probe Liveness(const NodeServiceState& s) {
  Probe p;
  if (s.supervisor_idle > kSupervisorStall) {
    p.body += fmt::format("supervisor loop stalled: no tick for {:.0f}s (limit {}s)\n", Seconds(s.supervisor_idle),
                          kSupervisorStall.count());
  }
  if (s.reconciler_idle > kReconcilerStall) {
    p.body += fmt::format("reconciler loop stalled: no step for {:.0f}s (limit {}s)\n", Seconds(s.reconciler_idle),
                          kReconcilerStall.count());
  }
  p.ok = p.body.empty();
  if (p.ok) p.body = "ok\n";
  return p;
}

Probe Readiness(const NodeServiceState& s) {
  Probe p;
  if (!s.kubelet_registered) p.body += "kubelet_registered: not registered to kubelet as the device plugin yet\n";
  if (!s.backend_connected) p.body += "backend_connected: the backend device plugin's ListAndWatch stream is not open\n";
  if (!s.backend_listed) p.body += "backend_listed: no device list from the backend since it (re)connected\n";
  if (s.reconcile_required && (!s.node || s.node->reconciles == 0)) {
    p.body += "reconciled: no PodResources List has answered yet\n";
  }
  if (!s.pods_synced) p.body += "pods_synced: the pods of this node are not listed yet\n";
  p.ok = p.body.empty();
  if (p.ok) p.body = "ok\n";
  return p;
}

namespace {

// GetPreferredAllocation, Allocate and the plan mismatches.
void AppendAllocationFamilies(std::string& out, const FrontCounters& f, const NodeCounters& n) {
  AppendFamily(out, "topofit_node_preferred_allocations_total", "counter",
               "GetPreferredAllocation container requests from kubelet by how they were answered: plan (the "
               "container's whole topofit.io/gpu-plan), partial_plan (the part of its plan kubelet still offers, "
               "the rest from the backend), foreign (no planned container fits the request: the backend's "
               "answer), backend_fallback (planned containers fit but kubelet is admitting none of them: the "
               "backend's answer), timeout (--preferred-timeout ran out during the call).");
  static constexpr const char* kOutcomes[kPreferredOutcomes] = {"plan", "partial_plan", "foreign", "backend_fallback",
                                                                "timeout"};
  for (int i = 0; i < kPreferredOutcomes; ++i)
    out += fmt::format("topofit_node_preferred_allocations_total{{outcome=\"{}\"}} {}\n", kOutcomes[i],
                       f.by_outcome[i].load());
  AppendFamily(out, "topofit_node_preferred_allocation_duration_seconds", "histogram",
               "Time topofit node took to answer one GetPreferredAllocation container request (capped by "
               "--preferred-timeout).");
  f.preferred_seconds.AppendTo(out, "topofit_node_preferred_allocation_duration_seconds");
  Counter(out, "topofit_node_preferred_allocations_tentative_total",
          "GetPreferredAllocation requests answered with a plan chosen by creation order among several "
          "candidates kubelet could not tell apart (PodResources Get refused or timed out).",
          f.tentative.load());
  Counter(out, "topofit_node_backend_preferred_errors_total",
          "The backend's own GetPreferredAllocation failed or timed out (topofit then filled the answer itself).",
          f.backend_preferred_errors.load());
  Counter(out, "topofit_node_allocate_calls_total", "Allocate calls from kubelet, forwarded to the backend.",
          f.allocate_calls.load());
  Counter(out, "topofit_node_allocate_errors_total",
          "Allocate calls the backend failed (kubelet rejects the pod with UnexpectedAdmissionError).",
          f.allocate_errors.load());
  Counter(out, "topofit_node_allocations_as_planned_total",
          "Containers whose allocated GPUs equal their topofit.io/gpu-plan exactly.", f.allocations_as_planned.load());
  Counter(out, "topofit_node_plan_mismatches_total",
          "Pods found holding other GPUs than their plan by the reconciler (one per pod; each also gets a Warning "
          "Event TopofitGpuSetMismatch).",
          n.mismatches.load());
}

// The reconciler and the PodResources calls.
void AppendReconcileFamilies(std::string& out, const NodeCounters& n, const PodResourcesCounters& pr) {
  Counter(out, "topofit_node_reconciles_total", "Reconciles whose PodResources List answered.", n.reconciles.load());
  Counter(out, "topofit_node_reconcile_errors_total", "Reconciles whose PodResources List failed.",
          n.reconcile_errors.load());
  AppendFamily(out, "topofit_node_reconcile_duration_seconds", "histogram",
               "Time of one reconcile: PodResources List, then the gpu-actual and gpu-health writes and Events.");
  n.reconcile_seconds.AppendTo(out, "topofit_node_reconcile_duration_seconds");
  AppendFamily(out, "topofit_node_podresources_calls_total", "counter",
               "Calls sent to kubelet's PodResources API by method (each retry of a rate-limited Get counts).");
  out += fmt::format("topofit_node_podresources_calls_total{{method=\"Get\"}} {}\n", pr.get.load());
  out += fmt::format("topofit_node_podresources_calls_total{{method=\"List\"}} {}\n", pr.list.load());
  Counter(out, "topofit_node_podresources_rate_limited_total",
          "PodResources Gets kubelet's rate limit refused (RESOURCE_EXHAUSTED); each is asked again after a pause "
          "while the Get's deadline lasts.",
          pr.get_rate_limited.load());
}

// The GPUs, the backend and kubelet now, and the restarts seen.
void AppendStateFamilies(std::string& out, const NodeServiceState& s, const NodeCounters& n) {
  AppendFamily(out, "topofit_node_gpus_by_health", "gauge",
               "GPUs in the backend's last device list by health (0 and 0 before its first list).");
  out += fmt::format("topofit_node_gpus_by_health{{health=\"healthy\"}} {}\n", s.gpus_healthy);
  out += fmt::format("topofit_node_gpus_by_health{{health=\"unhealthy\"}} {}\n", s.gpus_unhealthy);
  Gauge(out, "topofit_node_backend_connected",
        "1 while the backend device plugin's ListAndWatch stream is open and its device list has arrived.",
        s.backend_connected && s.backend_listed);
  Gauge(out, "topofit_node_kubelet_registered", "1 while registered to the kubelet serving kubelet.sock now.",
        s.kubelet_registered);
  Gauge(out, "topofit_node_ready", "1 when /readyz answers 200 (every readiness condition holds).",
        Readiness(s).ok);
  Counter(out, "topofit_node_kubelet_registrations_total", "Successful registrations to kubelet.",
          n.kubelet_registrations.load());
  AppendFamily(out, "topofit_node_restarts_seen_total", "counter",
               "Restarts topofit node noticed: kubelet (kubelet.sock re-created, or topofit's sockets in the device-plugin "
               "directory wiped, as kubelet does when it starts), backend "
               "(a Register from the backend after its first: it restarted, on its own or because topofit re-created "
               "the registration socket after a kubelet restart).");
  out += fmt::format("topofit_node_restarts_seen_total{{component=\"kubelet\"}} {}\n", n.kubelet_restarts.load());
  const uint64_t backend_registrations = n.backend_registrations.load();
  out += fmt::format("topofit_node_restarts_seen_total{{component=\"backend\"}} {}\n",
                     backend_registrations > 0 ? backend_registrations - 1 : 0);
}

}  // namespace

std::string RenderNodeMetrics(const NodeServiceState& s) {
  static const NodeCounters kNoNode;
  static const FrontCounters kNoFront;
  static const PodResourcesCounters kNoPodResources;
  const NodeCounters& n = s.node ? *s.node : kNoNode;
  std::string out;
  AppendAllocationFamilies(out, s.front ? *s.front : kNoFront, n);
  AppendReconcileFamilies(out, n, s.pod_resources ? *s.pod_resources : kNoPodResources);
  AppendStateFamilies(out, s, n);
  return out;
}

}  // namespace topofit::node
