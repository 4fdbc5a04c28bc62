#include "extender/apiclient/object_stores.h"

#include "extender/k8s/object_decoder.h"

namespace topofit::apiclient {

std::string MetaField(const nlohmann::json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto v = meta->find(field);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : std::string();
}

bool NodeStore::Apply(std::string_view json, std::string* name) {
  auto node = k8s::DecodeNode(json);
  if (!node.ok()) {
    log_("node skipped: " + node.error());
    return false;
  }
  sink_.ApplyNode(*node);
  *name = node->meta.name;
  return true;
}

void NodeStore::ListItem(std::string_view json) {
  std::string name;
  if (!Apply(json, &name)) return;
  known_.insert(name);  // Known at once: a list that fails later must still be able to delete it.
  listed_.insert(std::move(name));
}

void NodeStore::EndList() {
  for (const auto& name : known_) {
    if (!listed_.count(name)) sink_.DeleteNode(name);  // Deleted while we were not watching.
  }
  known_ = std::move(listed_);
  listed_.clear();
}

void NodeStore::Upsert(const nlohmann::json& object) {
  std::string name;
  if (Apply(object.dump(), &name)) known_.insert(std::move(name));
}

void NodeStore::Remove(const nlohmann::json& object) {
  std::string name = MetaField(object, "name");
  if (name.empty()) return;
  sink_.DeleteNode(name);
  known_.erase(name);
}

std::string PodStore::Apply(std::string_view json, std::string* uid_read) {
  auto pod = k8s::DecodePod(json);
  uid_read->clear();
  if (!pod.ok()) {
    log_("pod skipped: " + pod.error());
    return {};
  }
  const std::string& uid = pod->meta.uid;
  *uid_read = uid;
  if (pod->gpus <= 0 || pod->terminated()) {
    if (known_.count(uid)) sink_.DeletePod(uid);  // Finished: its GPUs are free.
    return {};
  }
  sink_.ApplyPod(*pod);
  return uid;
}

void PodStore::ListItem(std::string_view json) {
  std::string uid_read;
  std::string uid = Apply(json, &uid_read);
  if (!uid.empty()) {
    known_.insert(uid);
    listed_.insert(std::move(uid));
  } else if (!uid_read.empty()) {
    known_.erase(uid_read);
  }
}

void PodStore::EndList() {
  for (const auto& uid : known_) {
    if (!listed_.count(uid)) sink_.DeletePod(uid);
  }
  known_ = std::move(listed_);
  listed_.clear();
}

void PodStore::Upsert(const nlohmann::json& object) {
  std::string uid_read;
  std::string uid = Apply(object.dump(), &uid_read);
  if (!uid.empty()) {
    known_.insert(std::move(uid));
  } else if (!uid_read.empty()) {
    known_.erase(uid_read);
  }
}

void PodStore::Remove(const nlohmann::json& object) {
  std::string uid = MetaField(object, "uid");
  if (uid.empty()) return;
  sink_.DeletePod(uid);
  known_.erase(uid);
}

}  // namespace topofit::apiclient
