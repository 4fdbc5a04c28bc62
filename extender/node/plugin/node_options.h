#pragma once
// NodeOptions: everything `topofit node` is told on its command line (extender/cli/node_command.cc),
// with the production defaults. Every socket path is a flag so that a test harness can run the
// binary against its own kubelet stand-in in a temporary directory.

#include <chrono>
#include <string>

namespace topofit::node {

struct NodeOptions {
  std::string node_name;  // Plans for any other node are ignored.
  // Kubelet's device-plugin directory: kubelet dials plugin sockets here by bare file name.
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string kubelet_socket = "kubelet.sock";               // In device_plugin_dir: kubelet's Registration.
  std::string registrar_socket = "topofit-registrar.sock";   // In device_plugin_dir: where the backend registers.
  std::string front_socket = "topofit-nvidia-gpu.sock";      // In device_plugin_dir: what kubelet dials.
  // The backend's DevicePlugin socket. Empty: learned from the backend's Register (endpoint in
  // device_plugin_dir). A path: dialled at start, no registration needed.
  std::string backend_socket;
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";  // "" disables.
  std::string resource_name = "nvidia.com/gpu";
  // The built-in fake backend (tests, demo): a `nvidia-smi topo -m` file; it serves on
  // fake_backend_socket in device_plugin_dir and registers to the registrar like the NVIDIA plugin.
  std::string fake_backend_topo;
  std::string fake_backend_socket = "topofit-fake-gpu.sock";
  // Plans from a file (a PodList or a JSON array of Pods, re-read when it changes) instead of the API server.
  std::string pods_file;
  std::string kubeconfig;
  std::string context;
  std::chrono::milliseconds preferred_timeout{1000};   // Hard cap on GetPreferredAllocation.
  std::chrono::milliseconds get_timeout{150};          // One wave of PodResources Gets, while narrowing candidates.
  std::chrono::milliseconds reconcile_interval{2000};  // PodResources List -> gpu-actual.
  // The agent's topology publishing (API mode, no fake backend); "" turns it off.
  std::string nvidia_smi = "nvidia-smi";
  std::chrono::milliseconds topology_interval{300000};
};

}  // namespace topofit::node
