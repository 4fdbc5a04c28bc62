#pragma once
// NodeStore and PodStore: the ReflectorStores of the live cluster. They decode API JSON with the
// k8s/ decoders and forward to a ClusterSink, remembering which objects they forwarded so that a
// re-list deletes from the sink whatever the new list no longer has (nothing leaks across a 410).
//
// PodStore forwards only pods that request GPUs; a pod that turns Succeeded or Failed is deleted
// from the sink (its GPUs are free) even before the field selector's DELETED event arrives.
// Each store is used by one reflector thread; the sink must outlive it.

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "extender/apiclient/cluster_sink.h"
#include "extender/apiclient/reflector.h"

namespace topofit::apiclient {

using LogFn = std::function<void(const std::string&)>;

// metadata.<field> of an API object when it is a string, else "".
std::string MetaField(const nlohmann::json& object, const char* field);

class NodeStore final : public ReflectorStore {
 public:
  NodeStore(ClusterSink& sink, LogFn log) : sink_(sink), log_(std::move(log)) {}
  void BeginList() override { listed_.clear(); }
  void ListItem(std::string_view json) override;
  void EndList() override;
  void Upsert(const nlohmann::json& object) override;
  void Remove(const nlohmann::json& object) override;
  size_t size() const { return known_.size(); }

 private:
  bool Apply(std::string_view json, std::string* name);
  ClusterSink& sink_;
  LogFn log_;
  std::unordered_set<std::string> known_;   // Node names forwarded.
  std::unordered_set<std::string> listed_;  // Names the list in progress has had.
};

class PodStore final : public ReflectorStore {
 public:
  PodStore(ClusterSink& sink, LogFn log) : sink_(sink), log_(std::move(log)) {}
  void BeginList() override { listed_.clear(); }
  void ListItem(std::string_view json) override;
  void EndList() override;
  void Upsert(const nlohmann::json& object) override;
  void Remove(const nlohmann::json& object) override;
  size_t size() const { return known_.size(); }

 private:
  // Returns the uid if the pod is now held in the sink, "" otherwise (then *uid_read is the pod's
  // uid when the object was readable at all, "" if not; an unreadable update leaves the last good
  // state in place).
  std::string Apply(std::string_view json, std::string* uid_read);
  ClusterSink& sink_;
  LogFn log_;
  std::unordered_set<std::string> known_;   // Pod uids forwarded and not deleted.
  std::unordered_set<std::string> listed_;  // Uids the list in progress holds in the sink.
};

}  // namespace topofit::apiclient
