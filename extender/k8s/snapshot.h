#pragma once
// Snapshot loader: the Nodes, Pods and PodGroups of a cluster from what `kubectl get
// nodes,pods,podgroups -A -o json` (or `-o yaml`) prints - a List whose items have kind Node, Pod or
// PodGroup (of either API, pod_group.h: its apiVersion says which; without one, the Workload API's) -
// and, where GPUs are served by DRA, the DeviceClasses, ResourceSlices and ResourceClaims (`kubectl
// get ...,deviceclasses,resourceslices,resourceclaims -A -o json`; docs/dra.md). A NodeList, a PodList
// (or a List of one of the other kinds) or a single such object is accepted too; items of other kinds
// are skipped.
//
// Errors name the item: "items[3] (pod default/train): spec.containers[0]...". Never throws.
//
// LoadSnapshot parses the whole text at once (simdjson's DOM). StreamSnapshot and the file loaders
// read the List one item at a time (list_stream.h): each Node and Pod goes to its callback as soon
// as it is decoded, in the order of the text, so memory holds one item, not the document (JSON;
// YAML is converted to JSON whole first). They deliver the same objects as LoadSnapshot and, for
// valid JSON, fail with the same errors; invalid JSON is refused with its byte offset. On an error,
// the objects before it have already been delivered. Kind-less items of a List whose kind
// (NodeList, PodList) comes after its items wait, as text, for that kind (and the items after them,
// to keep the order); kubectl's items name their kind, and the API server's Lists give theirs first.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/k8s/dra_objects.h"
#include "extender/k8s/objects.h"

namespace topofit::k8s {

struct Snapshot {
  std::vector<NodeObject> nodes;
  std::vector<PodObject> pods;
  std::vector<DeviceClassObject> device_classes;
  std::vector<ResourceSliceObject> resource_slices;
  std::vector<ResourceClaimObject> resource_claims;
  std::vector<PodGroupObject> pod_groups;
};

// JSON or YAML, told apart by the first character.
Result<Snapshot> LoadSnapshot(std::string_view text);
Result<Snapshot> LoadSnapshotFile(const std::string& path);  // Streamed: the memory of one item.

struct SnapshotSink {
  std::function<void(NodeObject&&)> node;
  std::function<void(PodObject&&)> pod;
  // The DRA kinds: items of a kind whose function is empty are skipped.
  std::function<void(DeviceClassObject&&)> device_class;
  std::function<void(ResourceSliceObject&&)> resource_slice;
  std::function<void(ResourceClaimObject&&)> resource_claim;
  std::function<void(PodGroupObject&&)> pod_group;  // May be empty: PodGroups are then skipped.
};
Status StreamSnapshot(std::string_view text, const SnapshotSink& sink);
// Reads the file in pieces of 1 MiB. Errors are prefixed with the path.
Status StreamSnapshotFile(const std::string& path, const SnapshotSink& sink);

}  // namespace topofit::k8s
