#pragma once
// DraStore: the ReflectorStore of one resource.k8s.io/v1 kind (DeviceClass, ResourceSlice,
// ResourceClaim). Like NodeStore it decodes API JSON with the k8s/ decoders (dra_decoder.h), forwards
// each object to its ClusterSink method and remembers the keys it forwarded, so that a re-list deletes
// what the new list lacks. DeviceClasses and ResourceSlices are keyed by name, ResourceClaims by uid.
// An object that does not decode is logged and skipped (the last good state stays). Used by one
// reflector thread; the sink must outlive it.

#include <string>
#include <string_view>
#include <unordered_set>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/object_stores.h"
#include "extender/apiclient/reflector.h"

namespace topofit::apiclient {

enum class DraKind { kDeviceClass, kResourceSlice, kResourceClaim };

// "deviceclasses", "resourceslices", "resourceclaims": the resource, for paths and messages.
std::string_view ResourceOf(DraKind kind);

class DraStore final : public ReflectorStore {
 public:
  DraStore(DraKind kind, ClusterSink& sink, LogFn log) : kind_(kind), sink_(sink), log_(std::move(log)) {}
  void BeginList() override { listed_.clear(); }
  void ListItem(std::string_view json) override;
  void EndList() override;
  void Upsert(const nlohmann::json& object) override;
  void Remove(const nlohmann::json& object) override;
  size_t size() const { return known_.size(); }

 private:
  // Decodes and forwards; the key, or "" when the object did not decode.
  std::string Apply(std::string_view json);
  void Delete(const std::string& key);
  DraKind kind_;
  ClusterSink& sink_;
  LogFn log_;
  std::unordered_set<std::string> known_;
  std::unordered_set<std::string> listed_;
};

}  // namespace topofit::apiclient
