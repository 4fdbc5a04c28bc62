#pragma once
// ClusterSink: where the live watch delivers decoded objects - the cluster model in production
// (ModelSink, model_sink.h), a recorder in tests.
//
// Calls come from the watch threads (one thread per kind, each kind in order);
// implementations must be thread-safe. Every call is idempotent from the caller's point of view:
// a re-list re-applies objects it already applied.

#include <string_view>

#include "extender/k8s/dra_objects.h"
#include "extender/k8s/objects.h"

namespace topofit::apiclient {

class ClusterSink {
 public:
  virtual ~ClusterSink() = default;
  virtual void ApplyNode(const k8s::NodeObject& node) = 0;
  virtual void DeleteNode(std::string_view name) = 0;
  virtual void ApplyPod(const k8s::PodObject& pod) = 0;
  virtual void DeletePod(std::string_view uid) = 0;
  // resource.k8s.io/v1 objects (docs/dra.md), watched beside nodes and pods; a sink that does not
  // model DRA leaves them (the default does nothing). Slices and classes by name, claims by uid.
  virtual void ApplyDeviceClass(const k8s::DeviceClassObject&) {}
  virtual void DeleteDeviceClass(std::string_view /*name*/) {}
  virtual void ApplyResourceSlice(const k8s::ResourceSliceObject&) {}
  virtual void DeleteResourceSlice(std::string_view /*name*/) {}
  virtual void ApplyResourceClaim(const k8s::ResourceClaimObject&) {}
  virtual void DeleteResourceClaim(std::string_view /*uid*/) {}
};

}  // namespace topofit::apiclient
