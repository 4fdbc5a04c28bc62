#include "extender/node/plugin/node_settings.h"

#include "base/duration.h"

namespace topofit::node {
namespace {

// In the order `topofit node --help` lists them.
constexpr NodeSetting kSettings[] = {
    {.flag = "--node-name", .text = &NodeOptions::node_name,
     .help = "This node (default: $NODE_NAME); plans for other nodes are ignored"},
    {.flag = "--device-plugin-dir", .text = &NodeOptions::device_plugin_dir,
     .default_text = "/var/lib/kubelet/device-plugins",
     .help = "Kubelet's device-plugin directory; the three socket names below live in it"},
    {.flag = "--kubelet-socket", .text = &NodeOptions::kubelet_socket, .default_text = "kubelet.sock",
     .help = "Kubelet's Registration socket (file name in --device-plugin-dir); topofit registers there"},
    {.flag = "--registrar-socket", .text = &NodeOptions::registrar_socket, .default_text = "topofit-registrar.sock",
     .help = "topofit's Registration socket (file name in --device-plugin-dir); point the NVIDIA plugin's "
             "KUBELET_SOCKET at it"},
    {.flag = "--front-socket", .text = &NodeOptions::front_socket, .default_text = "topofit-nvidia-gpu.sock",
     .help = "topofit's DevicePlugin socket (file name in --device-plugin-dir), the endpoint kubelet dials"},
    {.flag = "--backend-socket", .text = &NodeOptions::backend_socket,
     .help = "The backend plugin's socket path, dialled at start (default: learned from the backend's Register)"},
    {.flag = "--pod-resources-socket", .text = &NodeOptions::pod_resources_socket,
     .default_text = "/var/lib/kubelet/pod-resources/kubelet.sock",
     .help = "Kubelet's PodResources socket; empty disables Get narrowing and the reconciler"},
    {.flag = "--resource-name", .text = &NodeOptions::resource_name, .default_text = "nvidia.com/gpu",
     .help = "Extended resource served"},
    {.flag = "--kubeconfig", .text = &NodeOptions::kubeconfig,
     .help = "kubeconfig file (default: in-cluster service account)"},
    {.flag = "--context", .text = &NodeOptions::context, .help = "kubeconfig context (default: current-context)"},
    {.flag = "--preferred-timeout", .duration = &NodeOptions::preferred_timeout, .default_text = "1s",
     .help = "Hard cap on a GetPreferredAllocation answer; steps past it are skipped, never an error"},
    {.flag = "--get-timeout", .duration = &NodeOptions::get_timeout, .default_text = "150ms",
     .help = "Deadline of one wave of PodResources Gets (asked together) while matching"},
    {.flag = "--reconcile-interval", .duration = &NodeOptions::reconcile_interval, .default_text = "2s",
     .help = "PodResources List period of the reconciler (topofit.io/gpu-actual, gpu-health, mismatch Events)"},
    {.flag = "--nvidia-smi", .text = &NodeOptions::nvidia_smi, .default_text = "nvidia-smi",
     .help = "nvidia-smi for the topology annotations published on this Node (topofit.io/gpu-topology, "
             "gpu-uuids, gpu-pci-bus-ids, gpu-topology-hash); empty: do not publish topology"},
    {.flag = "--topology-interval", .duration = &NodeOptions::topology_interval, .default_text = "5m",
     .help = "Topology re-check period"},
    {.flag = "--ops-listen", .text = &NodeOptions::ops_listen,
     .help = "ADDR:PORT for /healthz, /readyz and /metrics (plain HTTP; port 0: any free one, logged); "
             "empty: none"},
};

}  // namespace

std::span<const NodeSetting> NodeSettings() { return kSettings; }

Status ApplySetting(const NodeSetting& row, const std::string& text, NodeOptions& options) {
  if (row.text) {
    options.*row.text = text;
    return Status::Ok();
  }
  auto d = ParseDuration(text);
  if (!d) return Error(std::string(row.flag) + ": " + d.error());
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms.count() <= 0) return Error(std::string(row.flag) + ": shorter than 1ms");
  options.*row.duration = ms;
  return Status::Ok();
}

NodeOptions::NodeOptions() {
  for (const NodeSetting& row : kSettings) (void)ApplySetting(row, row.default_text, *this);
}

}  // namespace topofit::node
