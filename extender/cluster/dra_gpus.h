#pragma once
// What DRA serves of one node's GPUs (DraNodeGpus) and one claim's (DraAllocation), as
// DraInventory (dra_inventory.h) computes them and the topology resolver and the model read them.
// Plain values; see docs/dra.md.

#include <string>
#include <utility>
#include <vector>

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

}  // namespace topofit::cluster
