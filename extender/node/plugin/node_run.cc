#include "extender/node/plugin/node_run.h"

#include <signal.h>

#include <thread>

#include "base/log.h"
#include "extender/apiclient/reflector.h"
#include "extender/node/topology_publisher.h"
#include "extender/node/kube_node_publisher.h"
#include "extender/node/plugin/kube_actual_publisher.h"

namespace topofit::node {
namespace {

sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// The process's side of the API server: the pod watch, the reconciler's publisher and the topology
// publishing. Declared after the service, so destroyed before it.
struct ApiSide {
  std::unique_ptr<apiclient::ApiClient> api;
  std::unique_ptr<apiclient::Reflector> reflector;
  std::unique_ptr<KubeActualPublisher> publisher;
  std::unique_ptr<KubeNodePublisher> node_publisher;
  std::unique_ptr<TopologyPublisher> topology;
  std::thread topology_thread;

  // Connects, starts the pod watch and (with `publish_topology`) the topology publishing, and hands
  // the service its pod source and publisher. Errors: the cluster cannot be reached from the kubeconfig.
  Status Connect(const NodeOptions& options, NodeService& service, bool publish_topology) {
    auto connected = ConnectToCluster(options.kubeconfig, options.context);
    if (!connected) return Error{connected.error()};
    api = std::move(*connected);
    apiclient::ReflectorOptions ro;
    ro.kind = "pods";
    ro.path = "/api/v1/pods";
    ro.field_selector = "spec.nodeName=" + options.node_name;
    ro.log = [](const std::string& m) { Log(LogLevel::kWarn, "pod watch", {{"detail", m}}); };
    reflector = std::make_unique<apiclient::Reflector>(*api, service.pods(), ro);
    reflector->Start();
    service.SetPodSource([r = reflector.get()] { return r->synced(); });
    publisher = std::make_unique<KubeActualPublisher>(*api, options.node_name);
    service.SetPublisher(publisher.get());
    if (publish_topology) {
      TopologyPublisherOptions to;
      to.node_name = options.node_name;
      to.nvidia_smi = options.nvidia_smi;
      to.interval = options.topology_interval;
      node_publisher = std::make_unique<KubeNodePublisher>(*api);
      topology = std::make_unique<TopologyPublisher>(to, *node_publisher);
      topology_thread = std::thread([this] { topology->Run(); });
    }
    return Status::Ok();
  }

  void StopTopology() {
    if (topology) topology->Stop();
    if (topology_thread.joinable()) topology_thread.join();
  }
};

// Starts the ops endpoints when asked; `stop` then stops them.
Status StartOps(const OpsServer& serve_ops, const NodeService& service, std::function<void()>& stop) {
  if (!serve_ops) return Status::Ok();
  auto ops = serve_ops(service);
  if (!ops.ok()) return Error{ops.error()};
  stop = std::move(*ops);
  return Status::Ok();
}

}  // namespace

int RunNodeService(const NodeOptions& options, const OpsServer& serve_ops, NodeRunHooks hooks) {
  sigset_t stop_signals = BlockStopSignals();
  NodeService service(options);
  ApiSide api_side;
  const bool local_backend = hooks.backend != nullptr;
  if (hooks.pods_file.empty()) {
    Status st = api_side.Connect(options, service, !local_backend && !options.nvidia_smi.empty());
    if (!st.ok()) return Log(LogLevel::kError, "cannot connect to the API server", {{"error", st.error()}}), 1;
  } else {
    service.SetPodsFile(hooks.pods_file);
  }
  if (local_backend) service.SetLocalBackend(std::move(hooks.backend));
  std::function<void()> stop_ops;
  Status st = StartOps(serve_ops, service, stop_ops);
  if (st.ok()) st = service.Start();
  if (!st.ok()) {
    Log(LogLevel::kError, "cannot start", {{"error", st.error()}});
    if (stop_ops) stop_ops();
    api_side.StopTopology();
    return 1;
  }
  Log(LogLevel::kInfo, "serving",
      {{"node", options.node_name}, {"registrar", service.registrar_path()}, {"front", service.front_path()},
       {"pods", hooks.pods_file.empty() ? "api" : hooks.pods_file},
       {"backend", local_backend ? "fake" : "registered"}});
  int sig = 0;
  sigwait(&stop_signals, &sig);
  Log(LogLevel::kInfo, "stopping", {{"signal", std::to_string(sig)}});
  api_side.StopTopology();
  if (api_side.reflector) api_side.reflector->Stop();
  if (stop_ops) stop_ops();
  service.Stop();
  return 0;
}

}  // namespace topofit::node
