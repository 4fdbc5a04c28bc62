#pragma once
// RunNodeService: the `topofit node` process - a NodeService (node_service.h) with its pod source,
// its publishers and the topology publishing, until SIGTERM or SIGINT:
//   - the pods: the API server's pods on this node (a reflector over --kubeconfig, field selector
//     spec.nodeName=<node>); or, in the test build, a pods file and no API server at all;
//   - the reconciler's writes (gpu-actual, gpu-health, mismatch Events) through KubeActualPublisher;
//   - the topology publishing (topology_publisher.h: `nvidia-smi topo -m` and the GPU UUIDs on the Node, every
//     --topology-interval) on a thread of its own, unless --nvidia-smi is empty or the backend is an
//     in-process one (a test build's fake GPUs have no nvidia-smi).
// Exit status: 0 after the signal, 1 when it cannot connect to the API server or cannot start.

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "extender/node/plugin/node_options.h"
#include "extender/node/plugin/node_service.h"

namespace topofit::node {

// Called once before the service starts (the ops endpoints: /healthz, /readyz, /metrics over
// State()); returns what stops them, called before the service stops. Its error ends the process
// (exit 1).
using OpsServer = std::function<Result<std::function<void()>>(const NodeService& service)>;

// What the test build (topofit-node-testing) adds; `topofit node` adds nothing.
struct NodeRunHooks {
  // Pods and plans from this file (NodeService::SetPodsFile) instead of the API server.
  std::string pods_file;
  // An in-process backend (NodeService::SetLocalBackend) instead of one that registers.
  std::unique_ptr<LocalBackend> backend;
};

int RunNodeService(const NodeOptions& options, const OpsServer& serve_ops = nullptr, NodeRunHooks hooks = {});

}  // namespace topofit::node
