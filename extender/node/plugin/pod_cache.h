#pragma once
// PodCache: the pods on this node with their plans, as the matcher reads them - a snapshot
// (immutable, shared) replaced whole on every change, so a GetPreferredAllocation call reads it
// without holding a lock across its I/O. Fed by the API server (it is an apiclient::ReflectorStore,
// watching pods with spec.nodeName=<node>) or by a file (--pods-file, PollFile re-reads it when its
// modification time or size changes). Objects that do not decode are skipped with a log line;
// a pod's broken plan is logged once per pod and value. Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "extender/apiclient/reflector.h"
#include "extender/node/plugin/plan.h"

namespace topofit::node {

class PodCache : public apiclient::ReflectorStore {
 public:
  explicit PodCache(std::string resource) : resource_(std::move(resource)) {}

  std::shared_ptr<const std::vector<NodePod>> Snapshot() const;
  void Set(std::vector<NodePod> pods);  // Replaces all (tests, the file source).

  // A list's pods are gathered and replace the cache at EndList (a list that fails part way and
  // begins again drops what it had gathered).
  void BeginList() override;
  void ListItem(std::string_view json) override;
  void EndList() override;
  void Upsert(const nlohmann::json& object) override;
  void Remove(const nlohmann::json& object) override;

  // Re-reads `path` if it changed since the last call; returns whether the pods were replaced.
  Status PollFile(const std::string& path);

 private:
  void Publish();  // mu_ held.
  void Note(const NodePod& pod);

  std::string resource_;
  mutable std::mutex mu_;
  std::map<std::string, NodePod> by_uid_;
  std::map<std::string, NodePod> listing_;  // The list in progress.
  std::shared_ptr<const std::vector<NodePod>> snapshot_ = std::make_shared<std::vector<NodePod>>();
  std::set<std::string> logged_errors_;
  std::string file_stamp_;
};

}  // namespace topofit::node
