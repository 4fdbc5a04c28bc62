// DRA nodes: topofit scores the set kube-scheduler's allocator will give (its first fit), bind
// reserves that set or the claim's, and the bind view says whether they agree (docs/dra.md).
#include "extender/placement/dra_prediction.h"

#include <doctest/doctest.h>

#include <array>
#include <string_view>

#include "extender/cluster/dra_cluster.h"
#include "extender/cluster/testing/builders.h"
#include "extender/cluster/testing/dra_builders.h"

namespace topofit::placement {
namespace {

using namespace cluster::testing;

// cross: the allocator tries GPU 0, then 2 (another PCIe root); paired: 0, then 1 (one root);
// dp: a device-plugin node of 4 GPUs.
struct Fixture {
  Fixture() : dra(model), pipeline(&model) {
    dra.ApplyDeviceClass(GpuClass());
    dra.ApplyNode(DecodedNode("cross", 0));
    dra.ApplyNode(DecodedNode("paired", 0));
    dra.ApplyResourceSlice(GpuSlice("cross", {0, 2, 1, 3}));
    dra.ApplyResourceSlice(GpuSlice("paired", {0, 1, 2, 3}));
  }
  cluster::ClusterModel model;
  cluster::DraCluster dra;
  Pipeline pipeline;
};

}  // namespace

TEST_CASE("DRA prediction: the candidate is the allocator's first fit, and the node whose first fit is better wins") {
  Fixture f;
  const std::array<std::string_view, 2> nodes{"cross", "paired"};
  auto evals = f.pipeline.Evaluate(Request("p", 2), nodes);
  REQUIRE(evals.size() == 2);
  CHECK(evals[0].candidate.gpus == GpuSet::Of({0, 2}));  // Not topofit's best pair (0,1): the allocator's.
  CHECK(evals[1].candidate.gpus == GpuSet::Of({0, 1}));
  CHECK(evals[1].candidate.ring_mbps > evals[0].candidate.ring_mbps);  // One PCIe root beats two.
  CHECK(evals[1].score > evals[0].score);
  auto scores = f.pipeline.Prioritize(Request("p", 2), nodes);
  CHECK(scores[1].score == 10);

  // required PHB: only paired's first fit (one PCIe root) meets it.
  auto required = f.pipeline.Filter(Request("r", 2, Required("PHB")), nodes);
  REQUIRE(required.passed.size() == 1);
  CHECK(required.passed[0] == 1);
}

TEST_CASE("DRA prediction: bind reserves the first fit, or the claim's GPUs once the claim is in the model") {
  Fixture f;
  auto r = f.pipeline.ReserveBest(Request("a", 2), "cross");
  REQUIRE(r.ok());
  CHECK(*r == GpuSet::Of({0, 2}));
  // The next pod: the allocator skips the GPUs held (0 and 2) and takes 1, 3.
  auto view = ViewDraBind(f.pipeline, Request("b", 2), "cross", std::nullopt);
  CHECK(view.dra);
  CHECK(view.predicted == GpuSet::Of({1, 3}));
  CHECK(view.Note() == "DRA claim not seen yet; predicted GPUs 1,3");

  // Pod c's claim reached the model first (PreBind allocated 2,3 on paired): bind takes those.
  f.dra.ApplyResourceClaim(GpuClaim("c-claim", "c", "paired", {2, 3}));
  view = ViewDraBind(f.pipeline, Request("c", 2), "paired", f.dra.AllocationOf("c"));
  CHECK(view.predicted == GpuSet::Of({0, 1}));  // What the allocator was predicted to give before.
  REQUIRE(view.allocated);
  CHECK(*view.allocated == GpuSet::Of({2, 3}));
  CHECK(view.Note() == "DRA claim allocated GPUs 2,3, not the predicted 0,1");
  auto c = f.pipeline.ReserveBest(Request("c", 2), "paired");
  REQUIRE(c.ok());
  CHECK(*c == GpuSet::Of({2, 3}));

  f.dra.ApplyResourceClaim(GpuClaim("d-claim", "d", "paired", {0, 1}));
  view = ViewDraBind(f.pipeline, Request("d", 2), "paired", f.dra.AllocationOf("d"));
  CHECK(view.Note() == "DRA claim allocated GPUs 0,1 as predicted");
  CHECK_FALSE(ViewDraBind(f.pipeline, Request("e", 1), "nowhere", std::nullopt).dra);
}

}  // namespace topofit::placement
