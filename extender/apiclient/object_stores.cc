#include "extender/apiclient/object_stores.h"

#include "extender/k8s/object_decoder.h"

namespace topofit::apiclient {

std::string MetaField(const nlohmann::json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto v = meta->find(field);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : std::string();
}

void ObjectStore::Record(Applied applied, bool listing) {
  if (applied.held) {
    // Known at once: a list that fails later must still be able to delete it.
    known_.insert(*applied.held);
    if (listing) listed_.insert(std::move(*applied.held));
  } else if (!applied.read.empty()) {
    known_.erase(applied.read);
  }
}

void ObjectStore::ListItem(std::string_view json) { Record(Apply(json), true); }

void ObjectStore::EndList() {
  for (const auto& key : known_) {
    if (!listed_.count(key)) Delete(key);  // Deleted while we were not watching.
  }
  known_ = std::move(listed_);
  listed_.clear();
}

void ObjectStore::Upsert(const nlohmann::json& object) { Record(Apply(object.dump()), false); }

void ObjectStore::Remove(const nlohmann::json& object) {
  std::string key = KeyOf(object);
  if (key.empty()) return;
  Delete(key);
  known_.erase(key);
}

ObjectStore::Applied NodeStore::Apply(std::string_view json) {
  auto node = k8s::DecodeNode(json);
  if (!node.ok()) {
    log_("node skipped: " + node.error());
    return {};
  }
  sink_.ApplyNode(*node);
  return {node->meta.name, node->meta.name};
}

ObjectStore::Applied PodStore::Apply(std::string_view json) {
  auto pod = k8s::DecodePod(json);
  if (!pod.ok()) {
    log_("pod skipped: " + pod.error());
    return {};
  }
  const std::string& uid = pod->meta.uid;
  if (pod->gpus <= 0 || pod->terminated()) {
    if (Known(uid)) sink_.DeletePod(uid);  // Finished: its GPUs are free.
    return {std::nullopt, uid};
  }
  sink_.ApplyPod(*pod);
  if (uid.empty()) return {};
  return {uid, uid};
}

}  // namespace topofit::apiclient
