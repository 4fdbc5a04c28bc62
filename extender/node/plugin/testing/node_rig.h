#pragma once
// NodeRig: a topofit node service against the fake kubelet and the fake backend over real unix
// sockets, in a temporary /tmp/tfn-XXXXXX holding device-plugins/ and pod-resources/ (short: unix
// socket paths are < 108 bytes). Removed, with everything stopped, when the rig goes out of scope.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "base/files.h"
#include "extender/node/plugin/testing/fake_backend.h"
#include "extender/node/plugin/node_service.h"
#include "extender/node/plugin/testing/fake_kubelet.h"
#include "test/util/temp_dir.h"

namespace topofit::node::testing {

// The 8-GPU H100 node the fake backend serves.
inline const std::string kRigTopo = std::string(TOPOFIT_SOURCE_DIR) + "/topology/testdata/topo/h100-8-nv18-8nic.txt";

// Polls f every 10 ms until it holds or `timeout` passes; then f's last answer.
template <typename F>
bool Eventually(F&& f, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

struct NodeRig {
  ::topofit::testing::TempDir tmp{"tfn", "/tmp"};  // Short: unix socket paths.
  std::string root = tmp.path(), dir, pr;
  std::unique_ptr<FakeKubelet> kubelet;
  std::unique_ptr<FakeBackend> backend;
  std::unique_ptr<NodeService> service;
  NodeOptions options;  // Node n1, the rig's sockets, reconcile every 100 ms.

  explicit NodeRig(uint64_t seed) {
    dir = root + "/device-plugins";
    pr = root + "/pod-resources/kubelet.sock";
    std::filesystem::create_directories(dir);
    std::filesystem::create_directories(root + "/pod-resources");
    kubelet = std::make_unique<FakeKubelet>(dir, pr, seed);
    REQUIRE(kubelet->Start().ok());
    options.node_name = "n1";
    options.device_plugin_dir = dir;
    options.pod_resources_socket = pr;
    options.reconcile_interval = std::chrono::milliseconds(100);
  }
  ~NodeRig() {
    if (service) service->Stop();
    if (backend) backend->Stop();
    kubelet->Stop();
  }
  NodeRig(const NodeRig&) = delete;
  NodeRig& operator=(const NodeRig&) = delete;

  // Serves the fake backend (made from kRigTopo the first time) on its socket and registers it to the
  // service's registrar, as the NVIDIA plugin does; the service must be started.
  void StartBackend() {
    if (!backend) {
      auto text = ReadFile(kRigTopo);
      REQUIRE(text.ok());
      auto b = FakeBackend::FromTopo(*text);
      REQUIRE(b.ok());
      backend = std::move(*b);
    }
    REQUIRE(backend->Start(dir + "/nvidia-gpu.sock").ok());
    REQUIRE(backend->Register(service->registrar_path(), "nvidia.com/gpu").ok());
  }
};

}  // namespace topofit::node::testing
