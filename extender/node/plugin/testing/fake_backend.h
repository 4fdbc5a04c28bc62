#pragma once
// FakeBackend: a stand-in for the NVIDIA device plugin, for tests only (the unit tests, and the test
// build topofit-node-testing's --fake-backend; never in the shipped `topofit`).
// It reads a `nvidia-smi topo -m` text for the GPU count and each GPU's NUMA node, names GPU i
// FakeUuid(i), and serves v1beta1.DevicePlugin on a unix socket:
//   GetDevicePluginOptions  pre_start_required false, get_preferred_allocation_available true
//   ListAndWatch            every GPU with its health and NUMA node; again on every SetHealthy
//   GetPreferredAllocation  must_include, then available in its order, up to the size (first fit)
//   Allocate                per container, env NVIDIA_VISIBLE_DEVICES=<the IDs asked, comma-joined>
//   PreStartContainer       nothing
// Register() registers it, as the NVIDIA plugin does, to a Registration socket with its socket's
// bare file name as the endpoint. Thread-safe.
// InProcessBackend makes one the in-process backend of a NodeService (node_service.h, LocalBackend).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "extender/node/plugin/node_service.h"

namespace topofit::node {

// "GPU-fa4e0000-0000-4000-8000-00000000000<i in hex>".
std::string FakeUuid(int index);

class FakeBackend {
 public:
  static Result<std::unique_ptr<FakeBackend>> FromTopo(std::string_view topo_text);
  ~FakeBackend();

  // Serves on `socket_path` (an existing file there is removed first).
  Status Start(const std::string& socket_path);
  void Stop();
  // Registers to the Registration service at `registrar_path` as `resource`.
  Status Register(const std::string& registrar_path, const std::string& resource);

  void SetHealthy(const std::string& id, bool healthy);
  std::vector<std::string> uuids() const;
  int preferred_calls() const;
  int allocate_calls() const;

 private:
  FakeBackend();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `backend` as a NodeService's in-process backend: Start serves it on `socket_path` and registers it to
// the service's registrar; Stop stops it.
std::unique_ptr<LocalBackend> InProcessBackend(std::unique_ptr<FakeBackend> backend, std::string socket_path);

}  // namespace topofit::node
