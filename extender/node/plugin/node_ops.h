#pragma once
// What `topofit node` tells an operator: /healthz, /readyz and /metrics (served by the ops listener
// of extender/server/ops_listener.h, wired in node_command.cc), as pure functions of a
// NodeServiceState snapshot that NodeService::State() takes.
//   Liveness   200 "ok" while both loops of the process turn: the supervisor (sockets, kubelet
//              registration; every 50 ms) has ticked within kSupervisorStall and the reconciler
//              (PodResources List, gpu-actual, Events) has made a step within kReconcilerStall. The
//              bounds are far above the longest bounded call either makes (kubelet Register 10 s; an
//              API write 30 s per read or write), so only a hung loop fails it.
//   Readiness  200 "ok" when every condition holds, else 503 naming each one missing, one a line:
//                kubelet_registered  registered to the kubelet serving kubelet.sock now;
//                backend_connected   the backend's (NVIDIA plugin's) ListAndWatch stream is open;
//                backend_listed      its device list arrived since it last (re)connected;
//                reconciled          one PodResources List reconcile done (skipped without
//                                    --pod-resources-socket);
//                pods_synced         the pod source listed: the API server's first list of the
//                                    node's pods is in, or the pods file (the test
//                                    build's --pods-file) was read.
//   Metrics    the Prometheus families below (RenderNodeMetrics), every name topofit_node_*.
// NodeCounters are the service's own counters (the front plugin and the PodResources client keep
// theirs: FrontCounters, PodResourcesCounters). Thread-safe: atomics.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "base/prometheus.h"
#include "extender/node/plugin/front_plugin.h"
#include "extender/node/plugin/podresources_client.h"

namespace topofit::node {

inline constexpr std::chrono::seconds kSupervisorStall{60};
inline constexpr std::chrono::seconds kReconcilerStall{180};

struct NodeCounters {
  std::atomic<uint64_t> reconciles{0};        // Reconciles whose PodResources List answered.
  std::atomic<uint64_t> reconcile_errors{0};  // Reconciles whose List failed.
  Histogram reconcile_seconds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  std::atomic<uint64_t> mismatches{0};            // Pods given a TopofitGpuSetMismatch Event.
  std::atomic<uint64_t> kubelet_registrations{0};  // Successful Register calls to kubelet.
  std::atomic<uint64_t> kubelet_restarts{0};       // kubelet.sock re-created, or topofit's sockets wiped.
  std::atomic<uint64_t> backend_registrations{0};  // Register calls the registrar accepted.
};

struct NodeServiceState {
  bool kubelet_registered = false;
  bool backend_connected = false;
  bool backend_listed = false;
  bool reconcile_required = true;  // False without --pod-resources-socket.
  bool pods_synced = false;
  int gpus_healthy = 0;  // In the backend's last device list.
  int gpus_unhealthy = 0;
  std::chrono::steady_clock::duration supervisor_idle{};  // Since the loop's last heartbeat.
  std::chrono::steady_clock::duration reconciler_idle{};
  const NodeCounters* node = nullptr;
  const FrontCounters* front = nullptr;
  const PodResourcesCounters* pod_resources = nullptr;
};

struct Probe {
  bool ok = false;
  std::string body;  // "ok\n", or one line per failing check.
};

Probe Liveness(const NodeServiceState& s);
Probe Readiness(const NodeServiceState& s);
std::string RenderNodeMetrics(const NodeServiceState& s);

}  // namespace topofit::node
