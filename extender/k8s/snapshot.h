#pragma once
// Snapshot loader: the Nodes and Pods of a cluster from what `kubectl get nodes,pods -A -o json`
// (or `-o yaml`) prints - a List whose items have kind Node or Pod. A NodeList, a PodList or a
// single Node or Pod object is accepted too; items of other kinds are skipped.
//
// Errors name the item: "items[3] (pod default/train): spec.containers[0]...". Never throws.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/k8s/objects.h"

namespace topofit::k8s {

struct Snapshot {
  std::vector<NodeObject> nodes;
  std::vector<PodObject> pods;
};

// JSON or YAML, told apart by the first character.
Result<Snapshot> LoadSnapshot(std::string_view text);
Result<Snapshot> LoadSnapshotFile(const std::string& path);

}  // namespace topofit::k8s
