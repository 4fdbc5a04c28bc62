#include "extender/apiclient/object_stores.h"

#include "extender/k8s/object_decoder.h"

namespace topofit::apiclient {
namespace {

std::string MetaField(const nlohmann::json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto v = meta->find(field);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace

bool NodeStore::Apply(const nlohmann::json& object, std::string* name) {
  auto node = k8s::DecodeNode(object.dump());
  if (!node.ok()) {
    log_("node " + MetaField(object, "name") + " skipped: " + node.error());
    return false;
  }
  sink_.ApplyNode(*node);
  *name = node->meta.name;
  return true;
}

void NodeStore::Replace(std::vector<nlohmann::json>& items) {
  std::unordered_set<std::string> seen;
  for (const auto& item : items) {
    std::string name;
    if (Apply(item, &name)) seen.insert(std::move(name));
  }
  for (const auto& name : known_) {
    if (!seen.count(name)) sink_.DeleteNode(name);  // Deleted while we were not watching.
  }
  known_ = std::move(seen);
}

void NodeStore::Upsert(const nlohmann::json& object) {
  std::string name;
  if (Apply(object, &name)) known_.insert(std::move(name));
}

void NodeStore::Remove(const nlohmann::json& object) {
  std::string name = MetaField(object, "name");
  if (name.empty()) return;
  sink_.DeleteNode(name);
  known_.erase(name);
}

std::string PodStore::Apply(const nlohmann::json& object, bool* decoded) {
  auto pod = k8s::DecodePod(object.dump());
  *decoded = pod.ok();
  if (!pod.ok()) {
    log_("pod " + MetaField(object, "namespace") + "/" + MetaField(object, "name") +
         " skipped: " + pod.error());
    return {};
  }
  const std::string& uid = pod->meta.uid;
  if (pod->gpus <= 0 || pod->terminated()) {
    if (known_.count(uid)) sink_.DeletePod(uid);  // Finished: its GPUs are free.
    return {};
  }
  sink_.ApplyPod(*pod);
  return uid;
}

void PodStore::Replace(std::vector<nlohmann::json>& items) {
  std::unordered_set<std::string> seen;
  for (const auto& item : items) {
    bool decoded = false;
    std::string uid = Apply(item, &decoded);
    if (!uid.empty()) seen.insert(std::move(uid));
  }
  for (const auto& uid : known_) {
    if (!seen.count(uid)) sink_.DeletePod(uid);
  }
  known_ = std::move(seen);
}

void PodStore::Upsert(const nlohmann::json& object) {
  bool decoded = false;
  std::string uid = Apply(object, &decoded);
  if (!uid.empty()) {
    known_.insert(std::move(uid));
  } else if (decoded) {
    known_.erase(MetaField(object, "uid"));
  }
}

void PodStore::Remove(const nlohmann::json& object) {
  std::string uid = MetaField(object, "uid");
  if (uid.empty()) return;
  sink_.DeletePod(uid);
  known_.erase(uid);
}

}  // namespace topofit::apiclient
