#pragma once
// NodeStore and PodStore: the ReflectorStores of the live cluster. They decode API JSON with the
// k8s/ decoders and forward to a ClusterSink, remembering which objects they forwarded so that a
// re-list deletes from the sink whatever the new list no longer has (nothing leaks across a 410).
// ObjectStore is that bookkeeping, once for both: each object is known by one key (a node's name, a
// pod's uid), and a store says only how an object is applied and how a key is deleted.
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
  void BeginList() final { listed_.clear(); }
  void ListItem(std::string_view json) final;
  void EndList() final;
  void Upsert(const nlohmann::json& object) final;
  void Remove(const nlohmann::json& object) final;
  size_t size() const { return known_.size(); }

 protected:
  // `key_field`: the metadata field that names an object ("name", "uid").
  ObjectStore(ClusterSink& sink, LogFn log, const char* key_field)
      : sink_(sink), log_(std::move(log)), key_field_(key_field) {}
  // What Apply did: `held` is the key when the object is now held in the sink, none otherwise; then
  // `read` is its key when the object was readable at all (it is no longer known), "" if not.
  struct Applied {
    std::optional<std::string> held;
    std::string read;
  };
  virtual Applied Apply(std::string_view json) = 0;
  virtual void Delete(const std::string& key) = 0;
  bool Known(const std::string& key) const { return known_.count(key) > 0; }

  ClusterSink& sink_;
  LogFn log_;

 private:
  void Record(Applied applied, bool listing);

  const char* key_field_;
  std::unordered_set<std::string> known_;   // Keys forwarded and not deleted.
  std::unordered_set<std::string> listed_;  // Keys the list in progress holds in the sink.
};

class NodeStore final : public ObjectStore {
 public:
  NodeStore(ClusterSink& sink, LogFn log) : ObjectStore(sink, std::move(log), "name") {}

 private:
  Applied Apply(std::string_view json) override;
  void Delete(const std::string& name) override { sink_.DeleteNode(name); }
};

class PodStore final : public ObjectStore {
 public:
  PodStore(ClusterSink& sink, LogFn log) : ObjectStore(sink, std::move(log), "uid") {}

 private:
  Applied Apply(std::string_view json) override;
  void Delete(const std::string& uid) override { sink_.DeletePod(uid); }
};

}  // namespace topofit::apiclient
