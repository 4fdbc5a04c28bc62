#pragma once
// A PreferredRequest (matcher.h) to and from the device plugin API's container request of
// GetPreferredAllocation: what kubelet asks the front plugin, and what the front plugin (or the test
// kubelet, testing/fake_kubelet.h) asks a device plugin. Field for field, in order; nothing is an
// error here (the matcher judges the contents). Pure functions, safe from any thread.

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "extender/node/plugin/matcher.h"

namespace topofit::node {

inline PreferredRequest PreferredRequestOf(const v1beta1::ContainerPreferredAllocationRequest& req) {
  return PreferredRequest{{req.available_deviceids().begin(), req.available_deviceids().end()},
                          {req.must_include_deviceids().begin(), req.must_include_deviceids().end()},
                          req.allocation_size()};
}

// Adds `r` to `req` as its next container request.
inline void AddContainerRequest(v1beta1::PreferredAllocationRequest& req, const PreferredRequest& r) {
  auto* c = req.add_container_requests();
  for (const auto& id : r.available) c->add_available_deviceids(id);
  for (const auto& id : r.must_include) c->add_must_include_deviceids(id);
  c->set_allocation_size(r.size);
}

}  // namespace topofit::node
