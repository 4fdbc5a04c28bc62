// The cloud machine-type table. Only machine types whose GPU model, count and interconnect are
// published are listed; docs/cloud-machine-types.md gives the source of each fact and says which
// entries rest on an inference (e.g. how a PCIe machine's GPUs split over its sockets). Machine types
// that carve a few GPUs out of a larger NVSwitch board (a2-highgpu-4g, p5.4xlarge) are left out: no
// built-in profile describes such a slice, and the matrix `topofit node` publishes does.

#include "topology/machine_types.h"

#include <algorithm>
#include <cctype>

namespace topofit {

const std::vector<MachineType>& MachineTypes() {
  static const std::vector<MachineType> types = {
      // Amazon EC2 (EKS).
      {"p4d.24xlarge", "aws", "A100 40GB SXM4", 8, "hgx-a100-8", ""},
      {"p4de.24xlarge", "aws", "A100 80GB SXM4", 8, "hgx-a100-8", ""},
      {"p5.48xlarge", "aws", "H100 80GB SXM5", 8, "hgx-h100-8", ""},
      {"p5e.48xlarge", "aws", "H200 141GB", 8, "hgx-h200-8", ""},
      {"p5en.48xlarge", "aws", "H200 141GB", 8, "hgx-h200-8", ""},
      {"g5.12xlarge", "aws", "A10G 24GB PCIe", 4, "pcie-4-single-socket", ""},
      {"g5.24xlarge", "aws", "A10G 24GB PCIe", 4, "pcie-4-single-socket", ""},
      {"g5.48xlarge", "aws", "A10G 24GB PCIe", 8, "pcie-8-dual-socket", ""},
      {"g6e.12xlarge", "aws", "L40S 48GB PCIe", 4, "pcie-4-single-socket", ""},
      {"g6e.24xlarge", "aws", "L40S 48GB PCIe", 4, "pcie-4-single-socket", ""},
      {"g6e.48xlarge", "aws", "L40S 48GB PCIe", 8, "pcie-8-dual-socket", ""},
      // Google Compute Engine (GKE).
      {"a2-highgpu-8g", "gcp", "A100 40GB SXM4", 8, "hgx-a100-8", "nvidia-tesla-a100"},
      {"a2-megagpu-16g", "gcp", "A100 40GB SXM4", 16, "hgx-a100-16", "nvidia-tesla-a100"},
      {"a2-ultragpu-8g", "gcp", "A100 80GB SXM4", 8, "hgx-a100-8", "nvidia-a100-80gb"},
      {"a3-highgpu-8g", "gcp", "H100 80GB SXM5", 8, "hgx-h100-8", "nvidia-h100-80gb"},
      {"a3-megagpu-8g", "gcp", "H100 80GB SXM5", 8, "hgx-h100-8", "nvidia-h100-mega-80gb"},
      {"a3-ultragpu-8g", "gcp", "H200 141GB", 8, "hgx-h200-8", "nvidia-h200-141gb"},
      {"a4-highgpu-8g", "gcp", "B200", 8, "hgx-b200-8", "nvidia-b200"},
      // Microsoft Azure (AKS).
      {"Standard_ND96asr_v4", "azure", "A100 40GB SXM4", 8, "hgx-a100-8", ""},
      {"Standard_ND96amsr_A100_v4", "azure", "A100 80GB SXM4", 8, "hgx-a100-8", ""},
      {"Standard_ND96isr_H100_v5", "azure", "H100 80GB", 8, "hgx-h100-8", ""},
  };
  return types;
}

const MachineType* FindMachineType(std::string_view instance_type) {
  auto same = [&](std::string_view name) {
    return name.size() == instance_type.size() &&
           std::equal(name.begin(), name.end(), instance_type.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  };
  for (const MachineType& m : MachineTypes()) {
    if (same(m.name)) return &m;
  }
  return nullptr;
}

}  // namespace topofit
