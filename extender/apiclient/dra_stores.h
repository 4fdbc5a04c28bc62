#pragma once
// DraStore: the ReflectorStore of one resource.k8s.io/v1 kind (DeviceClass, ResourceSlice,
// ResourceClaim). Like NodeStore it decodes API JSON with the k8s/ decoders (dra_decoder.h) and forwards
// each object to its ClusterSink method; ObjectStore remembers the keys forwarded, so that a re-list
// deletes what the new list lacks. DeviceClasses and ResourceSlices are keyed by name, ResourceClaims by
// uid.
// An object that does not decode is logged and skipped (the last good state stays). Used by one
// reflector thread; the sink must outlive it.

#include <string>
#include <string_view>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/object_stores.h"
#include "extender/apiclient/reflector.h"

namespace topofit::apiclient {

enum class DraKind { kDeviceClass, kResourceSlice, kResourceClaim };

// "deviceclasses", "resourceslices", "resourceclaims": the resource, for paths and messages.
std::string_view ResourceOf(DraKind kind);

class DraStore final : public ObjectStore {
 public:
  DraStore(DraKind kind, ClusterSink& sink, LogFn log)
      : ObjectStore(std::move(log), kind == DraKind::kResourceClaim ? "uid" : "name"), kind_(kind), sink_(sink) {}

 private:
  Applied Apply(std::string_view json) override;
  void Delete(const std::string& key) override;
  DraKind kind_;
  ClusterSink& sink_;
};

}  // namespace topofit::apiclient
