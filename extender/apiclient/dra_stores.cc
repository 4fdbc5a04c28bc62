#include "extender/apiclient/dra_stores.h"

#include "extender/k8s/dra_decoder.h"

namespace topofit::apiclient {

std::string_view ResourceOf(DraKind kind) {
  switch (kind) {
    case DraKind::kDeviceClass: return "deviceclasses";
    case DraKind::kResourceSlice: return "resourceslices";
    case DraKind::kResourceClaim: return "resourceclaims";
  }
  return "?";
}

namespace {

template <typename T>
ObjectStore::Applied Forward(const Result<T>& decoded, const LogFn& log, DraKind kind, std::string key,
                             const std::function<void(const T&)>& apply) {
  if (!decoded.ok()) {
    log(std::string(ResourceOf(kind)) + " item skipped: " + decoded.error());
    return {};
  }
  if (key.empty()) return {};
  apply(*decoded);
  return {key, key};
}

}  // namespace

ObjectStore::Applied DraStore::Apply(std::string_view json) {
  switch (kind_) {
    case DraKind::kDeviceClass: {
      auto c = k8s::DecodeDeviceClass(json);
      return Forward<k8s::DeviceClassObject>(c, log_, kind_, c.ok() ? c->meta.name : "",
                                             [&](const auto& o) { sink_.ApplyDeviceClass(o); });
    }
    case DraKind::kResourceSlice: {
      auto s = k8s::DecodeResourceSlice(json);
      return Forward<k8s::ResourceSliceObject>(s, log_, kind_, s.ok() ? s->meta.name : "",
                                               [&](const auto& o) { sink_.ApplyResourceSlice(o); });
    }
    case DraKind::kResourceClaim: {
      auto c = k8s::DecodeResourceClaim(json);
      return Forward<k8s::ResourceClaimObject>(c, log_, kind_, c.ok() ? c->meta.uid : "",
                                               [&](const auto& o) { sink_.ApplyResourceClaim(o); });
    }
  }
  return {};
}

void DraStore::Delete(const std::string& key) {
  switch (kind_) {
    case DraKind::kDeviceClass: sink_.DeleteDeviceClass(key); break;
    case DraKind::kResourceSlice: sink_.DeleteResourceSlice(key); break;
    case DraKind::kResourceClaim: sink_.DeleteResourceClaim(key); break;
  }
}

}  // namespace topofit::apiclient
