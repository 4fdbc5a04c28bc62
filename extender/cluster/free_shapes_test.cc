#include "extender/cluster/free_shapes.h"

#include <doctest/doctest.h>

#include "topology/profiles.h"

namespace topofit::cluster {
namespace {

std::shared_ptr<const Topology> Profile(const char* name) {
  auto m = ProfileMatrix(name);
  REQUIRE(m.ok());
  auto t = Topology::Build(std::move(m).value());
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("free shapes: DGX-1 V100 has two NVLink quads and no NVLink octet") {
  auto t = Profile("dgx1-v100");
  FreeShapes s = CountFreeShapes(*t, GpuSet::FirstN(8));
  CHECK(s.of_size(2) == 4);
  CHECK(s.of_size(4) == 2);
  CHECK(s.of_size(8) == 0);
  // 0,1,4,5 free: pairs 0-1, 4-5 (and 0-4, 1-5) are NVLink, but no quad is fully meshed.
  FreeShapes broken = CountFreeShapes(*t, GpuSet::Of({0, 1, 4, 5}));
  CHECK(broken.of_size(2) == 2);
  CHECK(broken.of_size(4) == 0);
}

TEST_CASE("free shapes: NVSwitch nodes count every size - PCIe nodes count none") {
  auto nv = Profile("hgx-a100-8");
  FreeShapes s = CountFreeShapes(*nv, GpuSet::FirstN(8));
  CHECK(s.nvlink_sets == std::array<int, 3>{4, 2, 1});
  CHECK(CountFreeShapes(*nv, GpuSet::Of({0, 3, 5})).nvlink_sets == std::array<int, 3>{1, 0, 0});
  auto pcie = Profile("pcie-8-dual-socket");
  CHECK(CountFreeShapes(*pcie, GpuSet::FirstN(8)).nvlink_sets == std::array<int, 3>{0, 0, 0});
}

TEST_CASE("free shapes: the counter memoises and sums") {
  auto t = Profile("hgx-a100-8");
  FreeShapeCounter counter;
  FreeShapes a = counter.Count(t, GpuSet::FirstN(8));
  FreeShapes b = counter.Count(t, GpuSet::FirstN(8));
  CHECK(a == b);
  a += b;
  CHECK(a.of_size(8) == 2);
  CHECK(counter.Count(nullptr, GpuSet::FirstN(8)).of_size(2) == 0);
}

}  // namespace
}  // namespace topofit::cluster
