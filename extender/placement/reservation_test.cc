// Bind support: reserve, confirm, release, expiry, retried binds.
#include <doctest/doctest.h>

#include <chrono>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement {
namespace {

using namespace std::chrono_literals;
using cluster::testing::MakeNode;
using cluster::testing::MakePod;
using cluster::testing::Request;

struct Fixture {
  Fixture() : model(cluster::ModelOptions{.reservation_ttl = 30s, .clock = &clock}), pipeline(&model) {
    model.ApplyNode(MakeNode("dgx", 8, "dgx1-v100"));
    model.ApplyNode(MakeNode("pcie", 4, "pcie-4-single-socket"));
  }
  cluster::FakeClock clock;
  cluster::ClusterModel model;
  Pipeline pipeline;
};

TEST_CASE("reserve: takes the best set and removes it from the free GPUs") {
  Fixture f;
  auto r = f.pipeline.ReserveBest(Request("p", 4), "dgx");
  REQUIRE(r.ok());
  CHECK(r->size() == 4);
  CHECK(f.model.Node("dgx")->free == GpuSet::FirstN(8) - *r);
  // A fully NVLink-meshed quad: every pair NV.
  auto topo = f.model.Node("dgx")->topology;
  for (int a : r->Indices())
    for (int b : r->Indices())
      if (a != b) CHECK(topo->link(a, b).cls == LinkClass::Nv);
  auto pod = f.model.PodByUid("p");
  REQUIRE(pod);
  CHECK(pod->kind == cluster::HoldingKind::kReserved);
  CHECK(pod->gpus == *r);
  CHECK(pod->node == "dgx");
}

TEST_CASE("reserve: a retried bind of the same pod to the same node gets the same GPUs") {
  Fixture f;
  auto first = f.pipeline.ReserveBest(Request("p", 2), "dgx");
  auto again = f.pipeline.ReserveBest(Request("p", 2), "dgx");
  REQUIRE(first.ok());
  REQUIRE(again.ok());
  CHECK(*first == *again);
  CHECK(f.model.Node("dgx")->free.size() == 6);
  REQUIRE(f.pipeline.Confirm("p").ok());
  auto after_confirm = f.pipeline.ReserveBest(Request("p", 2), "dgx");
  REQUIRE(after_confirm.ok());
  CHECK(*after_confirm == *first);
}

TEST_CASE("reserve: a new attempt on another node releases the old reservation") {
  Fixture f;
  REQUIRE(f.pipeline.ReserveBest(Request("p", 2), "dgx").ok());
  REQUIRE(f.pipeline.ReserveBest(Request("p", 2), "pcie").ok());
  CHECK(f.model.Node("dgx")->free.size() == 8);
  CHECK(f.model.Node("pcie")->free.size() == 2);
  CHECK(f.model.PodByUid("p")->node == "pcie");
}

TEST_CASE("reserve: errors are one line a user understands") {
  Fixture f;
  auto unknown = f.pipeline.ReserveBest(Request("p", 1), "ghost");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error() == "unknown node");
  auto too_many = f.pipeline.ReserveBest(Request("p", 8), "pcie");
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.error() == "8 GPUs requested, node has 4");
  REQUIRE(f.pipeline.ReserveBest(Request("a", 3), "pcie").ok());
  auto no_room = f.pipeline.ReserveBest(Request("p", 2), "pcie");
  REQUIRE_FALSE(no_room.ok());
  CHECK(no_room.error().rfind("2 GPUs requested, 1 free (GPU ", 0) == 0);
  CHECK_FALSE(f.pipeline.ReserveBest(Request("z", 0), "pcie").ok());
}

TEST_CASE("release frees the GPUs - confirm keeps them past the expiry") {
  Fixture f;
  REQUIRE(f.pipeline.ReserveBest(Request("a", 2), "pcie").ok());
  REQUIRE(f.pipeline.ReserveBest(Request("b", 2), "pcie").ok());
  CHECK(f.model.Node("pcie")->free.empty());
  REQUIRE(f.pipeline.Release("a").ok());
  CHECK(f.model.Node("pcie")->free.size() == 2);
  CHECK_FALSE(f.model.PodByUid("a"));
  CHECK(f.pipeline.Release("a").ok());  // Idempotent.
  REQUIRE(f.pipeline.Confirm("b").ok());
  f.clock.Advance(10min);
  CHECK(f.model.Node("pcie")->free.size() == 2);
  CHECK(f.model.PodByUid("b")->kind == cluster::HoldingKind::kConfirmed);
}

TEST_CASE("reservations expire: the GPUs come back - confirm then fails") {
  Fixture f;
  REQUIRE(f.pipeline.ReserveBest(Request("a", 4), "pcie").ok());
  f.clock.Advance(29s);
  CHECK(f.model.Node("pcie")->free.empty());
  f.clock.Advance(2s);
  // Readers sweep lazily: the filter sees the GPUs free again.
  std::vector<std::string> names{"pcie"};
  CHECK(f.pipeline.Filter(Request("q", 4), names).passed.size() == 1);
  CHECK(f.model.Node("pcie")->free.size() == 4);
  Status st = f.pipeline.Confirm("a");
  REQUIRE_FALSE(st.ok());
  CHECK(st.error() == "no reservation for pod a (expired or released)");
}

TEST_CASE("ExpireReservations sweeps every node") {
  Fixture f;
  REQUIRE(f.pipeline.ReserveBest(Request("a", 1), "pcie").ok());
  REQUIRE(f.pipeline.ReserveBest(Request("b", 1), "dgx").ok());
  REQUIRE(f.pipeline.ReserveBest(Request("c", 1), "dgx").ok());
  REQUIRE(f.pipeline.Confirm("c").ok());
  f.clock.Advance(31s);
  CHECK(f.model.ExpireReservations() == 2);
  CHECK(f.model.Totals().reserved_gpus == 0);
  CHECK(f.model.Totals().held_gpus == 1);
}

TEST_CASE("the watch reporting the bound pod turns our reservation into a holding") {
  Fixture f;
  auto r = f.pipeline.ReserveBest(Request("p", 2), "dgx");
  REQUIRE(r.ok());
  REQUIRE(f.pipeline.Confirm("p").ok());
  f.model.ApplyPod(MakePod("p", 2, "dgx"));  // Annotation not seen yet: keeps the reserved GPUs.
  auto pod = f.model.PodByUid("p");
  REQUIRE(pod);
  CHECK(pod->kind == cluster::HoldingKind::kBound);
  CHECK(pod->gpus == *r);
  CHECK_FALSE(pod->unknown_identity);
  f.model.ApplyPod(MakePod("p", 2, "dgx", r->ToString()));
  CHECK(f.model.PodByUid("p")->gpus == *r);
  CHECK(f.model.Node("dgx")->free.size() == 6);
}

}  // namespace
}  // namespace topofit::placement
