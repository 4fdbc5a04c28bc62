#pragma once
// NodeStore and PodStore: the ReflectorStores of the live cluster. They decode API JSON with the
// k8s/ decoders and forward to a ClusterSink, remembering which objects they forwarded so that a
// re-list deletes from the sink whatever the new list no longer has (nothing leaks across a 410).
// ObjectStore is that bookkeeping, once for every store (these two, DraStore, PodGroupFeed): each
// object is known by one key (a node's name, a pod's uid, a PodGroup's namespace/name), and a store
// says only how an object is applied and how a key is deleted - where to, is the store's own business.
//
// PodStore forwards only pods that request GPUs; a pod that turns Succeeded or Failed is deleted
// from the sink (its GPUs are free) even before the field selector's DELETED event arrives.
// An object that does not decode is logged and skipped, never an error; an unreadable update leaves
// the last good state in place.
// Each store is used by one reflector thread; the sink must outlive it.

#include <functional>
#include <optional>
#include <string>
#include <unordered_set>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/reflector.h"

namespace topofit::apiclient {

using LogFn = std::function<void(const std::string&)>;

// metadata.<field> of an API object when it is a string, else "".
std::string MetaField(const nlohmann::json& object, const char* field);

class ObjectStore : public ReflectorStore {
 public:
  // What Apply did: `held` is the key when the object is now held where the store keeps objects, none otherwise; then
  // `read` is its key when the object was readable at all (it is no longer known), "" if not.
  struct Applied {
    std::optional<std::string> held;
    std::string read;
  };

  void BeginList() final { listed_.clear(); }
  void ListItem(std::string_view json) final;
  void EndList() final;
  void Upsert(const nlohmann::json& object) final;
  void Remove(const nlohmann::json& object) final;
  size_t size() const { return known_.size(); }

 protected:
  // `key_field`: the metadata field that names an object ("name", "uid").
  ObjectStore(LogFn log, const char* key_field) : log_(std::move(log)), key_field_(key_field) {}
  virtual Applied Apply(std::string_view json) = 0;
  virtual void Delete(const std::string& key) = 0;
  // The key of a DELETED event's object; by default metadata.<key_field>, "" when it has none.
  virtual std::string KeyOf(const nlohmann::json& object) const { return MetaField(object, key_field_); }
  bool Known(const std::string& key) const { return known_.count(key) > 0; }

  LogFn log_;

 private:
  void Record(Applied applied, bool listing);

  const char* key_field_;
  std::unordered_set<std::string> known_;   // Keys forwarded and not deleted.
  std::unordered_set<std::string> listed_;  // Keys the list in progress holds in the sink.
};

class NodeStore final : public ObjectStore {
 public:
  NodeStore(ClusterSink& sink, LogFn log) : ObjectStore(std::move(log), "name"), sink_(sink) {}

 private:
  Applied Apply(std::string_view json) override;
  void Delete(const std::string& name) override { sink_.DeleteNode(name); }
  ClusterSink& sink_;
};

class PodStore final : public ObjectStore {
 public:
  PodStore(ClusterSink& sink, LogFn log) : ObjectStore(std::move(log), "uid"), sink_(sink) {}

 private:
  Applied Apply(std::string_view json) override;
  void Delete(const std::string& uid) override { sink_.DeletePod(uid); }
  ClusterSink& sink_;
};

}  // namespace topofit::apiclient
