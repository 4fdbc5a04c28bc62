#pragma once
// DraInventory: the GPUs that DRA serves, from the resource.k8s.io/v1 objects (docs/dra.md).
//
// - The GPU class: the DeviceClass whose spec.extendedResourceName is nvidia.com/gpu; of several, the
//   newest (creationTimestamp), then the lowest name - the one kube-scheduler maps the resource to
//   (dynamic-resource-allocation's extendedresourcecache). Its CEL selectors are read by
//   DeviceSelector; a class they cannot be read for admits no device (ClassWarning says why).
// - A node's GPUs (NodeGpus): the devices of the slices published for that node (spec.nodeName) that
//   the class admits and no NoSchedule/NoExecute taint keeps from the allocator, in the order the
//   in-tree allocator (structured/internal/incubating, v1.36) tries them: pools by (driver, pool name),
//   pools with binding conditions last, only a pool's newest generation and only complete pools
//   (resourceSliceCount slices), slices by name, devices in slice order. That is `first_fit`. The GPU
//   indices (`gpus`) follow the PCI bus id when every GPU has a distinct one (nvidia-smi's numbering,
//   which topology profiles use), else the first-fit order.
// - A claim's GPUs (Allocation): its allocation results that name a GPU of some node, by identity.
// - What claims not yet allocated will get on a node (ParseAsk once, then NodeAsk per node;
//   dra_pod_ask.h says what is read and what cannot be predicted).
// Slices of several nodes (allNodes, nodeSelector) serve no GPU here. Not thread-safe: DraCluster
// serialises it.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/cluster/device_selector.h"
#include "extender/cluster/dra_gpus.h"
#include "extender/cluster/dra_pod_ask.h"
#include "extender/k8s/dra_objects.h"

namespace topofit::cluster {

class DraInventory {
 public:
  void ApplyClass(k8s::DeviceClassObject c);
  void DeleteClass(std::string_view name);
  // Returns the nodes whose GPUs may have changed (the slice's old and new node).
  std::vector<std::string> ApplySlice(k8s::ResourceSliceObject s);
  std::vector<std::string> DeleteSlice(std::string_view name);

  const k8s::DeviceClassObject* GpuClass() const;
  std::string ClassWarning() const;  // "" when the GPU class is read (or there is none).
  std::optional<DraNodeGpus> NodeGpus(std::string_view node) const;
  std::optional<DraAllocation> Allocation(const k8s::ResourceClaimObject& claim) const;
  size_t slices() const { return slices_.size(); }
  // The claims' requests with their selectors read (the class's and the request's); nullopt when one
  // cannot be predicted (dra_pod_ask.h). Then per node: nullopt where a request admits GPUs and
  // other devices there or the node has no GPUs; `gpus` set when a request admits GPUs.
  struct AskRequest {
    DeviceSelector selector;
    int count = 1;  // DraAskRequest::kAll for All.
  };
  struct AskClaim {
    std::vector<AskRequest> requests;
    std::string match_attribute;  // "" without a constraint.
  };
  std::optional<std::vector<AskClaim>> ParseAsk(const std::vector<const k8s::ResourceClaimObject*>& claims) const;
  std::optional<DraNodeAsk> NodeAsk(std::string_view node, const std::vector<AskClaim>& claims, bool& gpus) const;
  // The (driver, pool) of a slice, if known.
  std::optional<std::pair<std::string, std::string>> PoolOf(std::string_view slice) const;
  // The nodes of the slices of (driver, pool).
  std::set<std::string> NodesOfPool(const std::string& driver, const std::string& pool) const;

 private:
  void RefreshClassLocked();  // gpu_class_ and selector_ after a class change.
  // The untainted devices of the node's slices in the allocator's order.
  std::vector<std::pair<const k8s::ResourceSliceObject*, const k8s::DraDevice*>> DevicesInOrder(std::string_view node) const;

  std::map<std::string, k8s::DeviceClassObject, std::less<>> classes_;
  const k8s::DeviceClassObject* gpu_class_ = nullptr;  // Into classes_.
  std::optional<Result<DeviceSelector>> selector_;      // gpu_class_'s, parsed once.
  std::map<std::string, k8s::ResourceSliceObject, std::less<>> slices_;         // By slice name.
  std::map<std::string, std::set<std::string>, std::less<>> slices_by_node_;    // Node -> slice names.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> slices_by_pool_;  // (driver, pool) -> names.
};

}  // namespace topofit::cluster
