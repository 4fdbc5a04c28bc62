#pragma once
// PodResourcesClient: kubelet's PodResources v1 API over its unix socket.
//   View()  Get(namespace, name) with a deadline, as the matcher's KubeletView of one container:
//           NOT_FOUND (or any "not found" error) is kNotFound; the pod with devices of `resource` on
//           that container is kHasDevices, without is kAdmitting; a `regular_init` container (Get
//           never reports one) is kHasDevices when any container of the pod holds devices of
//           `resource`, since kubelet admits it first; RESOURCE_EXHAUSTED (kubelet's rate
//           limit) is asked again after a pause while `timeout` lasts; any other failure is kUnknown.
//           Get does not touch kubelet's allocation books (List does: never call it from an RPC).
//   List()  every pod's containers and their devices of `resource`, for the reconciler only.
//   Allocatable() the devices of `resource` kubelet can allocate (GetAllocatableResources).
// Thread-safe; an empty socket path makes every call fail (View: kUnknown).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "extender/node/plugin/matcher.h"

namespace v1 {
class PodResourcesLister;
}

namespace topofit::node {

struct PodDevices {
  std::string namespace_;
  std::string name;
  std::vector<std::pair<std::string, DeviceList>> containers;  // Only containers holding the resource.
};

class PodResourcesClient {
 public:
  PodResourcesClient(const std::string& socket_path, std::string resource);
  ~PodResourcesClient();

  KubeletView View(const std::string& namespace_, const std::string& name, const std::string& container,
                   std::chrono::milliseconds timeout, bool regular_init = false) const;
  Result<std::vector<PodDevices>> List(std::chrono::milliseconds timeout) const;
  Result<DeviceList> Allocatable(std::chrono::milliseconds timeout) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topofit::node
