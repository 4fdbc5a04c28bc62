#pragma once
// NodeService: `topofit node` assembled - the registrar, the backend client, the front plugin, the
// PodResources client, the pod cache and (in tests) an in-process backend - and its supervisor, a
// thread that every 50 ms (every 20 ms while not registered to kubelet):
//   - re-reads the pods file (SetPodsFile) when it changed;
//   - notices kubelet's restart (kubelet.sock re-created; kubelet wipes the device-plugin
//     directory as it starts) or a wiped socket of ours, and re-creates the registrar and front
//     sockets (and restarts the in-process backend, which then re-registers, as the NVIDIA plugin
//     does when it sees its registration socket re-created);
//   - registers the front plugin to kubelet once the backend has registered and sent its device list
//     (front serving first: kubelet dials back at once), again after each kubelet restart;
// and a reconciler thread that every reconcile_interval drops ledger entries of pods gone or
// terminal, reads kubelet's PodResources List (never from an RPC handler) and replaces the ledger
// with it (holders named through the pod cache by namespace/name, the pod not deleting first; the
// regular init containers' holdings kept: reconciler.h, WithInitHoldings), asks Get about the
// planned pods that List left out and marks those kubelet has finished (reconciler.h, EndedPods:
// a second List when Get knew one of them), then,
// with a publisher: writes topofit.io/gpu-actual on each pod whose holding changed, a Warning Event
// TopofitGpuSetMismatch (once per pod, counted in mismatches()) when a container holds other GPUs
// than planned, and topofit.io/gpu-health on the Node when the backend's unhealthy set changes.
// Both loops beat a heartbeat and the service counts what it does (NodeCounters); State() is the
// snapshot node_ops.h turns into /healthz, /readyz and /metrics.
// The process around it (the pod source, the publishers, the topology publishing): node_run.h.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "extender/node/plugin/front_plugin.h"
#include "extender/node/plugin/node_ops.h"
#include "extender/node/plugin/node_options.h"
#include "extender/node/plugin/pod_cache.h"
#include "extender/node/plugin/reconciler.h"

namespace topofit::node {

// A backend device plugin inside the process (the test build's fake NVIDIA plugin,
// testing/fake_backend.h): NodeService starts it once its registrar serves - it serves and registers
// there, as the NVIDIA plugin does -, restarts it each time it re-creates its sockets, and stops it
// last.
class LocalBackend {
 public:
  virtual ~LocalBackend() = default;
  virtual Status Start(const std::string& registrar_path, const std::string& resource) = 0;
  virtual void Stop() = 0;
};

class NodeService {
 public:
  explicit NodeService(NodeOptions options);
  ~NodeService();

  // Reads the pods file, serves the registrar and front sockets, starts the in-process backend and
  // dials --backend-socket when given, and starts the supervisor. Errors: the pods file does not
  // read, a socket cannot be served, the in-process backend does not start.
  Status Start();
  void Stop();
  // Before Start: where the reconciler publishes (none: the ledger only). Borrowed.
  void SetPublisher(ActualPublisher* publisher);
  // Before Start: whether the pod source has listed (the API server's reflector). Without one the
  // pods come from the pods file or from whoever calls pods().Set: synced.
  void SetPodSource(std::function<bool()> synced);
  // Before Start: pods and plans from this JSON file (a PodList or an array of pods; PodCache::PollFile),
  // read by Start and re-read by the supervisor when it changes (the test build's --pods-file).
  void SetPodsFile(std::string path);
  // Before Start: an in-process backend, owned from then on.
  void SetLocalBackend(std::unique_ptr<LocalBackend> backend);
  NodeServiceState State() const;

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

}  // namespace topofit::node
