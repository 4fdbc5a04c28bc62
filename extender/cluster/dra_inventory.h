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
// Slices of several nodes (allNodes, nodeSelector) serve no GPU here. Not thread-safe: DraCluster
// serialises it.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/k8s/dra_objects.h"

namespace topofit::cluster {

struct DraGpu {
  std::string driver, pool, device;  // As claim results name it.
  std::string identity;    // The <driver>/uuid attribute, else "<driver>/<pool>/<device>".
  std::string pci_bus_id;  // <driver>/pcieBusID (NVIDIA's driver) or resource.kubernetes.io/pciBusID; "" if none.
  std::string pcie_root;   // resource.kubernetes.io/pcieRoot; "" if none.
  int numa = -1;           // <driver>/numa or <driver>/numaNode; -1 if none.
  std::string product;     // <driver>/productName; "" if none.
};

struct DraNodeGpus {
  std::string device_class;
  std::vector<DraGpu> gpus;    // By GPU index.
  std::vector<int> first_fit;  // GPU indices in the allocator's order.
  // Changes whenever anything above changes (the model re-resolves the node then).
  std::string Fingerprint() const;
};

struct DraAllocation {
  std::string node;
  int count = 0;
  // Per claim request, the identities of its GPUs (results order).
  std::vector<std::pair<std::string, std::vector<std::string>>> requests;
};

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

 private:
  std::map<std::string, k8s::DeviceClassObject, std::less<>> classes_;
  std::map<std::string, k8s::ResourceSliceObject, std::less<>> slices_;         // By slice name.
  std::map<std::string, std::set<std::string>, std::less<>> slices_by_node_;    // Node -> slice names.
};

}  // namespace topofit::cluster
