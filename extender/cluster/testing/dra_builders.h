#pragma once
// Builders of DRA objects for the cluster and placement tests (docs/dra.md): the NVIDIA-style GPU
// DeviceClass, a node's ResourceSlice and a pod's extended-resource claim, decoded from JSON as the
// API server would send them, so the tests go through the real decoders.

#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "extender/k8s/dra_decoder.h"
#include "extender/k8s/object_decoder.h"

namespace topofit::cluster::testing {

inline const char* kGpuClassJson = R"({"metadata":{"name":"gpu.nvidia.com","creationTimestamp":"2026-01-01T00:00:00Z"},
  "spec":{"extendedResourceName":"nvidia.com/gpu","selectors":[{"cel":{"expression":
  "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}})";

inline k8s::NodeObject DecodedNode(const std::string& name, int gpus) {
  auto n = k8s::DecodeNode(fmt::format(R"({{"metadata":{{"name":"{}"}},"status":{{"allocatable":
    {{"nvidia.com/gpu":"{}","cpu":"64","memory":"512Gi"}}}}}})", name, gpus));
  REQUIRE(n.ok());
  return *n;
}

// A slice of `node` whose devices gpu-<i> are listed in `order`; GPU i has bus id 0000:<10+i>:00.0
// and sits under PCIe root pci0000:<i/2>. A MIG device (type "mig") rides along, which the class refuses.
inline k8s::ResourceSliceObject GpuSlice(const std::string& node, const std::vector<int>& order, const std::string& name = "") {
  std::string devices;
  for (int i : order) {
    devices += fmt::format(R"({{"name":"gpu-{0}","attributes":{{"type":{{"string":"gpu"}},"uuid":{{"string":"GPU-{1}-{0}"}},
      "pcieBusID":{{"string":"0000:{2}:00.0"}},"resource.kubernetes.io/pcieRoot":{{"string":"pci0000:0{3}"}},
      "productName":{{"string":"Tesla T4"}}}}}},)", i, node, 10 + i, i / 2);
  }
  devices += R"({"name":"gpu-0-mig-1","attributes":{"type":{"string":"mig"}}})";
  auto s = k8s::DecodeResourceSlice(fmt::format(R"({{"metadata":{{"name":"{}"}},"spec":{{"driver":"gpu.nvidia.com",
    "nodeName":"{}","pool":{{"name":"{}","generation":1,"resourceSliceCount":1}},"devices":[{}]}}}})",
    name.empty() ? node + "-gpus" : name, node, node, devices));
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error()));
  return *s;
}

inline k8s::ResourceClaimObject GpuClaim(const std::string& uid, const std::string& pod_uid, const std::string& node,
                               const std::vector<int>& devices, bool extended = true) {
  std::string results;
  for (int d : devices)
    results += fmt::format(R"({}{{"request":"container-0-request-0","driver":"gpu.nvidia.com","pool":"{}","device":"gpu-{}"}})",
                           results.empty() ? "" : ",", node, d);
  auto c = k8s::DecodeResourceClaim(fmt::format(R"({{"metadata":{{"name":"p-extended-resources-1","namespace":"ml",
    "uid":"{}","annotations":{{"resource.kubernetes.io/extended-resource-claim":"{}"}},
    "ownerReferences":[{{"kind":"Pod","name":"p","uid":"{}","controller":true}}]}},
    "status":{{"allocation":{{"devices":{{"results":[{}]}}}}}}}})", uid, extended ? "true" : "false", pod_uid, results));
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  return *c;
}

inline k8s::DeviceClassObject GpuClass() { return *k8s::DecodeDeviceClass(kGpuClassJson); }

}  // namespace topofit::cluster::testing
