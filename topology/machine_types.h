#pragma once
// Cloud machine types: the GPU instance types of managed Kubernetes (EKS, GKE, AKS) whose GPU model,
// count and interconnect are published, each mapped to the built-in profile that describes it.
//
// Nodes there carry labels rather than nvidia-smi text: node.kubernetes.io/instance-type on all three
// (the EC2 instance type, the Compute Engine machine type, the Azure VM size) and, on GKE,
// cloud.google.com/gke-accelerator (the GPU type of the node pool). A machine type names a fixed
// GPU board, so it pins the profile without `topofit node`. docs/cloud-machine-types.md lists every
// entry with the sources of its facts; an instance type that is not listed resolves by the other
// sources (GPU Feature Discovery labels, then generic-pcie-N).

#include <string_view>
#include <vector>

namespace topofit {

struct MachineType {
  std::string_view name;             // As the cloud spells it: "p4d.24xlarge", "Standard_ND96asr_v4".
  std::string_view provider;         // "aws", "gcp" or "azure".
  std::string_view gpu;              // GPU model, e.g. "A100 40GB SXM4".
  int gpu_count = 0;
  std::string_view profile;          // A built-in profile with gpu_count GPUs.
  std::string_view gke_accelerator;  // GKE's cloud.google.com/gke-accelerator value; "" off GKE.
};

const std::vector<MachineType>& MachineTypes();

// The entry for an instance type, compared without regard to ASCII case (Azure sizes appear both as
// "Standard_ND96asr_v4" and lower-cased); nullptr when the type is not listed.
const MachineType* FindMachineType(std::string_view instance_type);

}  // namespace topofit
