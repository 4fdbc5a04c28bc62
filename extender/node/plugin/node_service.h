#pragma once
// NodeService: `topofit node` assembled - the registrar, the backend client, the front plugin, the
// PodResources client, the pod cache and (when asked) the fake backend - and its supervisor, a
// thread that every 50 ms (every 20 ms while not registered to kubelet):
//   - re-reads --pods-file when it changed;
//   - notices kubelet's restart (kubelet.sock re-created; kubelet wipes the device-plugin
//     directory as it starts) or a wiped socket of ours, and re-creates the registrar and front
//     sockets (and the fake backend's, which then re-registers, as the NVIDIA plugin does when it
//     sees its registration socket re-created);
//   - registers the front plugin to kubelet once the backend has registered and sent its device list
//     (front serving first: kubelet dials back at once), again after each kubelet restart;
// and a reconciler thread that every reconcile_interval drops ledger entries of pods gone or
// terminal, reads kubelet's PodResources List (never from an RPC handler) and replaces the ledger
// with it (holders named through the pod cache by namespace/name, the pod not deleting first), then,
// with a publisher: writes topofit.io/gpu-actual on each pod whose holding changed, a Warning Event
// TopofitGpuSetMismatch (once per pod, counted in mismatches()) when a container holds other GPUs
// than planned, and topofit.io/gpu-health on the Node when the backend's unhealthy set changes.
// Both loops beat a heartbeat and the service counts what it does (NodeCounters); State() is the
// snapshot node_ops.h turns into /healthz, /readyz and /metrics.
// RunNodeService runs one until SIGTERM or SIGINT, with the API server's pods (or --pods-file), the
// KubeActualPublisher and, on a real node, the agent's topology publishing (agent.h) in the same process.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "extender/node/plugin/front_plugin.h"
#include "extender/node/plugin/node_ops.h"
#include "extender/node/plugin/node_options.h"
#include "extender/node/plugin/plan_cache.h"
#include "extender/node/plugin/reconciler.h"

namespace topofit::node {

class NodeService {
 public:
  explicit NodeService(NodeOptions options);
  ~NodeService();

  // Serves the registrar and front sockets, starts the fake backend (serving, then registering)
  // and dials --backend-socket when given, and starts the supervisor. Errors: a socket cannot be
  // served, the fake backend's topology does not parse, the pods file does not read.
  Status Start();
  void Stop();
  // Before Start: where the reconciler publishes (none: the ledger only). Borrowed.
  void SetPublisher(ActualPublisher* publisher);
  // Before Start: whether the pod source has listed (the API server's reflector). Without one the
  // pods come from --pods-file (read by Start) or from whoever calls pods().Set: synced.
  void SetPodSource(std::function<bool()> synced);
  NodeState State() const;

  PodCache& pods();
  uint64_t mismatches() const;
  uint64_t reconciles() const;
  FrontPlugin& front();
  bool registered() const;           // Registered to the current kubelet.
  uint64_t kubelet_registrations() const;  // How many times it registered to a kubelet.
  std::string registrar_path() const;
  std::string front_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process: NodeService plus the pod source (the API server's pods on this node, or
// --pods-file), until a signal. Exit status as node_command.cc documents. `serve_ops`, when given, is
// called once before the service starts (the ops endpoints: /healthz, /readyz, /metrics over
// State()) and returns what stops them, called before the service stops; its error ends the process
// (exit 1).
using OpsServer = std::function<Result<std::function<void()>>(const NodeService& service)>;
int RunNodeService(const NodeOptions& options, const OpsServer& serve_ops = nullptr);

}  // namespace topofit::node
