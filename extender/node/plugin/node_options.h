#pragma once
// NodeOptions: everything `topofit node` is told on its command line, one member per row of the
// settings table (node_settings.h), which declares each one's flag, default and help once: a
// default-constructed NodeOptions holds the table's defaults. Every socket path is a setting so that a
// test harness can run the binary against its own kubelet stand-in in a temporary directory.

#include <chrono>
#include <string>

namespace topofit::node {

struct NodeOptions {
  NodeOptions();  // The defaults of node_settings.h.

  std::string node_name;  // Plans for any other node are ignored.
  // Kubelet's device-plugin directory: kubelet dials plugin sockets here by bare file name.
  std::string device_plugin_dir;
  std::string kubelet_socket;    // In device_plugin_dir: kubelet's Registration.
  std::string registrar_socket;  // In device_plugin_dir: where the backend registers.
  std::string front_socket;      // In device_plugin_dir: what kubelet dials.
  // The backend's DevicePlugin socket. Empty: learned from the backend's Register (endpoint in
  // device_plugin_dir). A path: dialled at start, no registration needed.
  std::string backend_socket;
  std::string pod_resources_socket;  // Kubelet's PodResources; "" disables Get narrowing and the reconciler.
  std::string resource_name;
  std::string kubeconfig;
  std::string context;
  std::chrono::milliseconds preferred_timeout{};   // Hard cap on GetPreferredAllocation.
  std::chrono::milliseconds get_timeout{};         // One wave of PodResources Gets, while narrowing candidates.
  std::chrono::milliseconds reconcile_interval{};  // PodResources List -> gpu-actual.
  // The topology publishing (topology annotations on the Node, topology_publisher.h; API mode, no in-process
  // backend); "" turns it off.
  std::string nvidia_smi;
  std::chrono::milliseconds topology_interval{};
  std::string ops_listen;  // ADDR:PORT of /healthz, /readyz, /metrics (node_ops.h); "" none.
};

}  // namespace topofit::node
