// `topofit node`: the per-GPU-node process (extender/node/plugin/node_service.h). It sits between
// kubelet and the NVIDIA device plugin: it registers to kubelet as nvidia.com/gpu, serves a
// Registration socket the NVIDIA plugin registers to instead (its KUBELET_SOCKET), forwards
// ListAndWatch, Allocate and PreStartContainer unchanged and answers GetPreferredAllocation from
// topofit's per-container plan (topofit.io/gpu-plan). Every socket is a flag, so a harness can run
// it against its own kubelet in a temporary directory. --ops-listen serves /healthz, /readyz and
// /metrics (extender/node/plugin/node_ops.h) on the listener `topofit serve --ops-listen` uses.
#include <cstdlib>
#include <memory>
#include <tuple>

#include "base/duration.h"
#include "base/log.h"
#include "extender/cli/command.h"
#include "extender/node/plugin/node_options.h"
#include "extender/node/plugin/node_service.h"
#include "extender/server/ops_listener.h"

namespace topofit::cli {
namespace {

struct NodeFlags {
  node::NodeOptions options;
  std::string preferred_timeout = "1s";
  std::string get_timeout = "150ms";
  std::string reconcile_interval = "2s";
  std::string topology_interval = "5m";
  std::string ops_listen;
};

Result<std::chrono::milliseconds> Millis(const std::string& flag, const std::string& text) {
  auto d = ParseDuration(text);
  if (!d) return Error(flag + ": " + d.error());
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms.count() <= 0) return Error(flag + ": shorter than 1ms");
  return ms;
}

int RunNode(NodeFlags& flags) {
  node::NodeOptions& o = flags.options;
  if (o.node_name.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) o.node_name = env;
  }
  if (o.node_name.empty()) return Log(LogLevel::kError, "no node name: pass --node-name or set NODE_NAME"), 2;
  for (auto [flag, text, out] : {std::tuple{"--preferred-timeout", &flags.preferred_timeout, &o.preferred_timeout},
                                 std::tuple{"--get-timeout", &flags.get_timeout, &o.get_timeout},
                                 std::tuple{"--reconcile-interval", &flags.reconcile_interval, &o.reconcile_interval},
                                 std::tuple{"--topology-interval", &flags.topology_interval, &o.topology_interval}}) {
    auto ms = Millis(flag, *text);
    if (!ms) return Log(LogLevel::kError, "bad flag", {{"error", ms.error()}}), 2;
    *out = *ms;
  }
  if (flags.ops_listen.empty()) return node::RunNodeService(o);
  auto serve_ops = [&flags](const node::NodeService& service) -> Result<std::function<void()>> {
    server::OpsHandlers handlers;
    auto probe = [](const node::Probe& p) { return server::OpsProbe{p.ok, p.body}; };
    handlers.live = [&service, probe] { return probe(node::Liveness(service.State())); };
    handlers.ready = [&service, probe] { return probe(node::Readiness(service.State())); };
    handlers.metrics = [&service] { return node::RenderNodeMetrics(service.State()); };
    auto ops = std::make_shared<server::OpsListener>(std::move(handlers));
    Status st = ops->Start(flags.ops_listen);
    if (!st.ok()) return Error(st.error());
    Log(LogLevel::kInfo, "ops endpoints serving",
        {{"ops", flags.ops_listen.substr(0, flags.ops_listen.rfind(':')) + ":" + std::to_string(ops->port())},
         {"paths", "/healthz /readyz /metrics"}});
    return std::function<void()>([ops] { ops->Stop(); });
  };
  return node::RunNodeService(o, serve_ops);
}

}  // namespace

CommandRun SetupNode(CLI::App& sub) {
  auto flags = std::make_shared<NodeFlags>();
  node::NodeOptions& o = flags->options;
  sub.add_option("--node-name", o.node_name, "This node (default: $NODE_NAME); plans for other nodes are ignored");
  sub.add_option("--device-plugin-dir", o.device_plugin_dir,
                 "Kubelet's device-plugin directory; the three socket names below live in it")
      ->capture_default_str();
  sub.add_option("--kubelet-socket", o.kubelet_socket,
                 "Kubelet's Registration socket (file name in --device-plugin-dir); topofit registers there")
      ->capture_default_str();
  sub.add_option("--registrar-socket", o.registrar_socket,
                 "topofit's Registration socket (file name in --device-plugin-dir); point the NVIDIA plugin's "
                 "KUBELET_SOCKET at it")
      ->capture_default_str();
  sub.add_option("--front-socket", o.front_socket,
                 "topofit's DevicePlugin socket (file name in --device-plugin-dir), the endpoint kubelet dials")
      ->capture_default_str();
  sub.add_option("--backend-socket", o.backend_socket,
                 "The backend plugin's socket path, dialled at start (default: learned from the backend's Register)");
  sub.add_option("--pod-resources-socket", o.pod_resources_socket,
                 "Kubelet's PodResources socket; empty disables Get narrowing and the reconciler")
      ->capture_default_str();
  sub.add_option("--resource-name", o.resource_name, "Extended resource served")->capture_default_str();
  sub.add_option("--fake-backend", o.fake_backend_topo,
                 "Run the built-in fake backend from this `nvidia-smi topo -m` file (tests, demo; fake UUIDs)");
  sub.add_option("--fake-backend-socket", o.fake_backend_socket,
                 "The fake backend's socket (file name in --device-plugin-dir)")
      ->capture_default_str();
  sub.add_option("--pods-file", o.pods_file,
                 "Read pods and their plans from this JSON file (PodList or array; re-read on change) "
                 "instead of the API server");
  sub.add_option("--kubeconfig", o.kubeconfig, "kubeconfig file (default: in-cluster service account)");
  sub.add_option("--context", o.context, "kubeconfig context (default: current-context)");
  sub.add_option("--preferred-timeout", flags->preferred_timeout,
                 "Hard cap on a GetPreferredAllocation answer; steps past it are skipped, never an error")
      ->capture_default_str();
  sub.add_option("--get-timeout", flags->get_timeout, "Deadline of one wave of PodResources Gets (asked together) while matching")
      ->capture_default_str();
  sub.add_option("--reconcile-interval", flags->reconcile_interval,
                 "PodResources List period of the reconciler (topofit.io/gpu-actual, gpu-health, mismatch Events)")
      ->capture_default_str();
  sub.add_option("--nvidia-smi", o.nvidia_smi,
                 "nvidia-smi for the topology annotations `topofit agent` publishes (API mode without "
                 "--fake-backend); empty: do not publish topology")
      ->capture_default_str();
  sub.add_option("--topology-interval", flags->topology_interval, "Topology re-check period")->capture_default_str();
  sub.add_option("--ops-listen", flags->ops_listen,
                 "ADDR:PORT for /healthz, /readyz and /metrics (plain HTTP; port 0: any free one, logged); "
                 "empty: none");
  return [flags] { return RunNode(*flags); };
}

}  // namespace topofit::cli
