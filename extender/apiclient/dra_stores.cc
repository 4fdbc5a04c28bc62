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
std::string Forward(const Result<T>& decoded, const LogFn& log, DraKind kind, std::string key,
                    const std::function<void(const T&)>& apply) {
  if (!decoded.ok()) {
    log(std::string(ResourceOf(kind)) + " item skipped: " + decoded.error());
    return {};
  }
  if (key.empty()) return {};
  apply(*decoded);
  return key;
}

}  // namespace

std::string DraStore::Apply(std::string_view json) {
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
  known_.erase(key);
}

void DraStore::ListItem(std::string_view json) {
  std::string key = Apply(json);
  if (key.empty()) return;
  known_.insert(key);
  listed_.insert(std::move(key));
}

void DraStore::EndList() {
  std::unordered_set<std::string> gone;
  for (const auto& key : known_)
    if (!listed_.count(key)) gone.insert(key);
  for (const auto& key : gone) Delete(key);
  known_ = std::move(listed_);
  listed_.clear();
}

void DraStore::Upsert(const nlohmann::json& object) {
  std::string key = Apply(object.dump());
  if (!key.empty()) known_.insert(std::move(key));
}

void DraStore::Remove(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return;
  auto v = meta->find(kind_ == DraKind::kResourceClaim ? "uid" : "name");
  if (v == meta->end() || !v->is_string()) return;
  Delete(v->get<std::string>());
}

}  // namespace topofit::apiclient
