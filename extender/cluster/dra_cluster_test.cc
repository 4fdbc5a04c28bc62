#include "extender/cluster/dra_cluster.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "extender/cluster/testing/dra_builders.h"
#include "extender/k8s/dra_decoder.h"
#include "extender/k8s/object_decoder.h"

namespace topofit::cluster {
namespace {

using namespace testing;

k8s::PodObject BoundPod(const std::string& uid, const std::string& node, int gpus) {
  auto p = k8s::DecodePod(fmt::format(R"({{"metadata":{{"name":"p","namespace":"ml","uid":"{}"}},
    "spec":{{"nodeName":"{}","containers":[{{"name":"c","resources":{{"limits":{{"nvidia.com/gpu":"{}","cpu":"2"}}}}}}]}},
    "status":{{"phase":"Running"}}}})", uid, node, gpus));
  REQUIRE(p.ok());
  return *p;
}

// A model with one DRA node d1 of 4 GPUs, in slice order 0..3.
struct OneDraNode {
  OneDraNode() : dra(model) {
    dra.ApplyDeviceClass(GpuClass());
    dra.ApplyNode(DecodedNode("d1", 0));
    dra.ApplyResourceSlice(GpuSlice("d1", {0, 1, 2, 3}));
  }
  ClusterModel model;
  DraCluster dra;
};

}  // namespace

TEST_CASE("DRA nodes: GPUs from the slices, numbered by PCI bus id, first-fit order kept, device-plugin nodes alone") {
  ClusterModel model;
  DraCluster dra(model);
  dra.ApplyNode(DecodedNode("dp", 4));
  dra.ApplyNode(DecodedNode("d1", 0));
  CHECK(model.Node("d1")->usable.empty());  // No class, no slices yet.
  dra.ApplyResourceSlice(GpuSlice("d1", {2, 0, 3, 1}));
  dra.ApplyResourceSlice(GpuSlice("dp", {0, 1}));  // Ignored: dp advertises nvidia.com/gpu.
  CHECK(model.Node("d1")->usable.empty());  // Still no class.
  dra.ApplyDeviceClass(GpuClass());

  auto d1 = model.Node("d1");
  REQUIRE(d1);
  CHECK(d1->usable.size() == 4);  // The MIG device is not of the class.
  CHECK(d1->source == TopologySource::kDraAttributes);
  REQUIRE(d1->gpus.size() == 4);
  CHECK(d1->gpus[0].uuid == "GPU-d1-0");  // Index order: PCI bus id.
  CHECK(d1->gpus[3].pci_bus_id == "0000:13:00.0");
  CHECK(d1->topology->link(0, 1).cls == LinkClass::Phb);  // Same PCIe root.
  CHECK(d1->topology->link(1, 2).cls == LinkClass::Node);
  {
    auto reader = model.Read();
    const NodeState* n = reader.Find("d1");
    REQUIRE(n);
    CHECK(n->spec().dra());
    CHECK(n->spec().first_fit == std::vector<int>{2, 0, 3, 1});  // Slice order, by index.
    CHECK(n->product_id() == GpuProductId("Tesla T4"));
    CHECK_FALSE(reader.Find("dp")->spec().dra());
  }
  CHECK(model.Node("dp")->usable.size() == 4);
  CHECK(model.Node("dp")->source == TopologySource::kGenericFallback);

  dra.DeleteDeviceClass("gpu.nvidia.com");
  CHECK(model.Node("d1")->usable.empty());
}

TEST_CASE("DRA claims: a pod's extended-resource claim holds its GPUs before and after the bind") {
  OneDraNode f;
  ClusterModel& model = f.model;
  DraCluster& dra = f.dra;

  model.ApplyPod(dra.Pod(BoundPod("pu", "", 2)));  // Pending: filter and bind read its entry.
  REQUIRE(model.pending().Get("pu"));
  dra.ApplyResourceClaim(GpuClaim("c1", "pu", "d1", {1, 3}));  // Allocated at PreBind; the pod is not bound yet.
  CHECK(model.pending().Get("pu"));  // Still there for the bind.
  auto held = model.PodByUid("pu");
  REQUIRE(held);
  CHECK(held->node == "d1");
  CHECK(held->gpus == GpuSet::Of({1, 3}));
  CHECK(held->observed);
  CHECK(model.Node("d1")->free == GpuSet::Of({0, 2}));
  CHECK(dra.AllocationOf("pu")->count == 2);

  model.ApplyPod(dra.Pod(BoundPod("pu", "d1", 2)));  // The bound pod arrives.
  held = model.PodByUid("pu");
  REQUIRE(held);
  CHECK(held->gpus == GpuSet::Of({1, 3}));
  CHECK_FALSE(held->unknown_identity);

  dra.DeleteResourceClaim("c1");  // Its pod keeps its count, of unknown identity.
  held = model.PodByUid("pu");
  REQUIRE(held);
  CHECK(held->gpus.size() == 2);
  CHECK(held->unknown_identity);
}

TEST_CASE("DRA claims: users' own claims hold GPUs as their own holdings, an unreadable class admits none") {
  OneDraNode f;
  ClusterModel& model = f.model;
  DraCluster& dra = f.dra;
  dra.ApplyResourceClaim(GpuClaim("c9", "x", "d1", {0, 1, 2}, /*extended=*/false));
  auto held = model.PodByUid(std::string(kClaimHoldingPrefix) + "c9");
  REQUIRE(held);
  CHECK(held->gpus == GpuSet::Of({0, 1, 2}));
  CHECK(model.Node("d1")->free == GpuSet::Of({3}));
  dra.DeleteResourceClaim("c9");
  CHECK_FALSE(model.PodByUid(std::string(kClaimHoldingPrefix) + "c9"));
  CHECK(model.Node("d1")->free.size() == 4);

  auto odd = k8s::DecodeDeviceClass(R"j({"metadata":{"name":"gpu.nvidia.com","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"extendedResourceName":"nvidia.com/gpu","selectors":[{"cel":{"expression":"device.driver.startsWith('gpu')"}}]}})j");
  dra.ApplyDeviceClass(*odd);
  CHECK(dra.Warning().find("DeviceClass gpu.nvidia.com: CEL selector") == 0);
  CHECK(model.Node("d1")->usable.empty());
}

TEST_CASE("DRA inventory: the allocator's order over pools, generations and slices") {
  DraInventory inv;
  inv.ApplyClass(GpuClass());
  auto b = GpuSlice("n", {2, 3}, "n-b");
  auto a = GpuSlice("n", {0, 1}, "n-a");
  a.slice_count = b.slice_count = 2;
  inv.ApplySlice(b);
  CHECK_FALSE(inv.NodeGpus("n"));  // One slice of two: an incomplete pool is never allocated from.
  inv.ApplySlice(a);
  auto gpus = inv.NodeGpus("n");
  REQUIRE(gpus);
  CHECK(gpus->first_fit == std::vector<int>{0, 1, 2, 3});  // Slices by name: n-a before n-b.
  auto newer = GpuSlice("n", {3}, "n-c");
  newer.generation = 2;
  inv.ApplySlice(newer);
  gpus = inv.NodeGpus("n");
  REQUIRE(gpus);
  CHECK(gpus->gpus.size() == 1);  // Generation 2 replaces generation 1's slices.
  auto tainted = GpuSlice("m", {0, 1});
  tainted.devices[0].tainted = true;
  inv.ApplySlice(tainted);
  CHECK(inv.NodeGpus("m")->gpus.size() == 1);
}

}  // namespace topofit::cluster
