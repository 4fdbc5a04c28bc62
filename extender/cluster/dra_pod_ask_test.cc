// PredictDraAsk (the allocator replayed on one node) and DraCluster::AskOf (a pod's own claims, its
// claims from templates, the implicit extended resource name, and what is not predicted).
#include "extender/cluster/dra_pod_ask.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "extender/cluster/dra_cluster.h"
#include "extender/cluster/testing/dra_builders.h"
#include "extender/k8s/dra_decoder.h"
#include "extender/k8s/object_decoder.h"

namespace topofit::cluster {
namespace {

using namespace testing;

DraNodeAsk Ask(std::vector<DraClaimAsk> claims) {
  DraNodeAsk a{std::move(claims)};
  a.Seal();
  return a;
}

const std::vector<int> kOrder = {0, 1, 2, 3, 4, 5, 6, 7};
// GPU i under PCIe root i/2, as GpuSlice puts it.
const std::vector<std::string> kRoots = {"r0", "r0", "r1", "r1", "r2", "r2", "r3", "r3"};

}  // namespace

TEST_CASE("PredictDraAsk: first fit per request, claims in order, All, matchAttribute with backtracking") {
  GpuSet free = GpuSet::FirstN(8) - GpuSet::Of({0, 3});
  // Two requests of one claim: the first takes 1,2; the second the next free, 4.
  CHECK(PredictDraAsk(Ask({{{{kOrder, 2}, {kOrder, 1}}, {}}}), free) == GpuSet::Of({1, 2, 4}));
  // The request's own order (its selectors' admitted devices) decides.
  CHECK(PredictDraAsk(Ask({{{{{7, 6, 5}, 2}}, {}}}), free) == GpuSet::Of({6, 7}));
  // Two claims: the second never gets what the first took.
  CHECK(PredictDraAsk(Ask({{{{kOrder, 1}}, {}}, {{{kOrder, 1}}, {}}}), free) == GpuSet::Of({1, 2}));
  // Not enough: no set.
  CHECK_FALSE(PredictDraAsk(Ask({{{{kOrder, 7}}, {}}}), free));
  // All: every admitted GPU, and only when all are free.
  CHECK(PredictDraAsk(Ask({{{{{4, 5}, DraAskRequest::kAll}}, {}}}), free) == GpuSet::Of({4, 5}));
  CHECK_FALSE(PredictDraAsk(Ask({{{{{2, 3}, DraAskRequest::kAll}}, {}}}), free));
  // matchAttribute pcieRoot: 1 (root r0) fixes r0, whose other GPU 0 is taken; backtrack to 2 (r1),
  // 3 taken; then 4 (r2): 4,5.
  CHECK(PredictDraAsk(Ask({{{{kOrder, 2}}, kRoots}}), free) == GpuSet::Of({4, 5}));
  // One GPU asked: the first free one, whatever its root.
  CHECK(PredictDraAsk(Ask({{{{kOrder, 1}}, kRoots}}), free) == GpuSet::Of({1}));
  // A GPU without the attribute is never taken.
  std::vector<std::string> some = {"", "", "x", "x", "", "", "", ""};
  CHECK_FALSE(PredictDraAsk(Ask({{{{kOrder, 2}}, some}}), free));
  CHECK(PredictDraAsk(Ask({{{{kOrder, 2}}, some}}), GpuSet::FirstN(8)) == GpuSet::Of({2, 3}));
  // The hash tells orders apart.
  CHECK(Ask({{{{kOrder, 2}}, {}}}).hash != Ask({{{{{7, 6, 5, 4, 3, 2, 1, 0}, 2}}, {}}}).hash);
}

namespace {

k8s::ResourceClaimObject UserClaim(const std::string& name, const std::string& uid, const std::string& devices,
                                   const std::string& allocation = "") {
  auto c = k8s::DecodeResourceClaim(fmt::format(R"({{"metadata":{{"name":"{}","namespace":"ml","uid":"{}"}},
    "spec":{{"devices":{}}}{}}})", name, uid, devices, allocation));
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  return *c;
}

k8s::PodObject ClaimPod(const std::string& claims, const std::string& statuses = "[]", const std::string& limits = "{}") {
  auto p = k8s::DecodePod(fmt::format(R"({{"metadata":{{"name":"p","namespace":"ml","uid":"pod-1"}},
    "spec":{{"containers":[{{"name":"c","resources":{{"limits":{}}}}}],"resourceClaims":{}}},
    "status":{{"resourceClaimStatuses":{}}}}})", limits, claims, statuses));
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error()));
  return *p;
}

// d1's devices in slice order 0..7, d2's 7..0; roots i/2 on both.
struct TwoDraNodes {
  TwoDraNodes() : dra(model) {
    dra.ApplyDeviceClass(GpuClass());
    dra.ApplyNode(DecodedNode("d1", 0));
    dra.ApplyNode(DecodedNode("d2", 0));
    dra.ApplyResourceSlice(GpuSlice("d1", {0, 1, 2, 3, 4, 5, 6, 7}));
    dra.ApplyResourceSlice(GpuSlice("d2", {7, 6, 5, 4, 3, 2, 1, 0}));
  }
  ClusterModel model;
  DraCluster dra;
};

const char* kTwoGpus = R"({"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}]})";

}  // namespace

TEST_CASE("DraCluster::AskOf: a user's claim, a template's claim, the implicit name, and what is not predicted") {
  TwoDraNodes f;
  f.dra.ApplyResourceClaim(UserClaim("two", "c-two", kTwoGpus));
  auto ask = f.dra.AskOf(ClaimPod(R"([{"name":"g","resourceClaimName":"two"}])"));
  REQUIRE(ask);
  CHECK(ask->gpus == 2);
  REQUIRE(ask->Find("d1"));
  REQUIRE(ask->Find("d2"));
  CHECK(PredictDraAsk(*ask->Find("d1"), GpuSet::FirstN(8)) == GpuSet::Of({0, 1}));
  CHECK(PredictDraAsk(*ask->Find("d2"), GpuSet::FirstN(8)) == GpuSet::Of({6, 7}));

  // From a template: the claim status names; before it does, nothing is asked.
  const char* from_template = R"([{"name":"g","resourceClaimTemplateName":"t"}])";
  CHECK_FALSE(f.dra.AskOf(ClaimPod(from_template)));
  CHECK(f.dra.AskOf(ClaimPod(from_template, R"([{"name":"g","resourceClaimName":"two"}])")));
  // The implicit extended resource name of the class.
  auto implicit = f.dra.AskOf(ClaimPod("[]", "[]", R"({"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"3"})"));
  REQUIRE(implicit);
  CHECK(implicit->gpus == 3);
  CHECK(PredictDraAsk(*implicit->Find("d1"), GpuSet::FirstN(8)) == GpuSet::Of({0, 1, 2}));

  // A request selector and a matchAttribute constraint: both read.
  f.dra.ApplyResourceClaim(UserClaim("aligned", "c-aligned", R"({"requests":[{"name":"gpus","exactly":{
    "deviceClassName":"gpu.nvidia.com","count":2,"selectors":[{"cel":{"expression":
    "device.attributes['gpu.nvidia.com'].productName == 'Tesla T4'"}}]}}],
    "constraints":[{"matchAttribute":"resource.kubernetes.io/pcieRoot"}]})"));
  auto aligned = f.dra.AskOf(ClaimPod(R"([{"name":"g","resourceClaimName":"aligned"}])"));
  REQUIRE(aligned);
  CHECK(PredictDraAsk(*aligned->Find("d1"), GpuSet::FirstN(8) - GpuSet::Of({1})) == GpuSet::Of({2, 3}));

  // Not predicted: an allocated claim, an unknown claim or class, a selector that cannot be read,
  // firstAvailable, a distinctAttribute constraint; a claim asking no GPU asks nothing.
  f.dra.ApplyResourceClaim(UserClaim("done", "c-done", kTwoGpus,
      R"(,"status":{"allocation":{"devices":{"results":[{"request":"gpus","driver":"gpu.nvidia.com","pool":"d1","device":"gpu-0"}]}}})"));
  CHECK_FALSE(f.dra.AskOf(ClaimPod(R"([{"name":"g","resourceClaimName":"done"}])")));
  CHECK_FALSE(f.dra.AskOf(ClaimPod(R"([{"name":"g","resourceClaimName":"absent"}])")));
  for (const char* devices : {
           R"({"requests":[{"name":"x","exactly":{"deviceClassName":"nope"}}]})",
           R"({"requests":[{"name":"x","exactly":{"deviceClassName":"gpu.nvidia.com","selectors":[{"cel":{"expression":"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}}]})",
           R"({"requests":[{"name":"x","firstAvailable":[{"name":"a","deviceClassName":"gpu.nvidia.com"}]}]})",
           R"({"requests":[{"name":"x","exactly":{"deviceClassName":"gpu.nvidia.com"}}],"constraints":[{"distinctAttribute":"gpu.nvidia.com/uuid"}]})",
           R"({"requests":[{"name":"x","exactly":{"deviceClassName":"gpu.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}}]})"}) {
    CAPTURE(devices);
    f.dra.ApplyResourceClaim(UserClaim("odd", "c-odd", devices));
    CHECK_FALSE(f.dra.AskOf(ClaimPod(R"([{"name":"g","resourceClaimName":"odd"}])")));
  }
  // A pod with no claims asks nothing.
  CHECK_FALSE(f.dra.AskOf(ClaimPod("[]")));
}

}  // namespace topofit::cluster
