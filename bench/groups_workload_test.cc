#include "bench/groups_workload.h"

#include <map>

#include <doctest/doctest.h>

#include "extender/groups/group_nodes.h"

namespace topofit::bench {
namespace {

const groups::DomainLevels kLevels = groups::DomainLevels::Defaults();
constexpr int kSpine = 1, kBlock = 2, kAccel = 3, kHost = 4;

TEST_CASE("groups workload: the size mixes and their median and mean") {
  auto helios = GroupSizeMix("helios-fit");
  REQUIRE(helios.ok());
  REQUIRE(helios->entries.size() == 7);
  CHECK(helios->entries.front().gpus == 1);
  CHECK(helios->entries.back().gpus == 64);
  CHECK(helios->MedianGpus() == 1);
  CHECK(helios->MeanGpus() == doctest::Approx(7.0 * 64 / 127));  // 3.53
  auto multi = GroupSizeMix("multi-node");
  REQUIRE(multi.ok());
  CHECK(multi->MeanGpus() == doctest::Approx(248.0 / 5));
  CHECK(multi->MedianGpus() == 32);
  CHECK(GroupSizeMix("philly").error() ==
        "unknown size mix 'philly': expected helios-fit, multi-node or openb+multi-node");
  // openb's pods and the multi-node groups each ask half of the GPUs.
  auto mixed = GroupSizeMix("openb+multi-node");
  REQUIRE(mixed.ok());
  double pod_gpus = 0, group_gpus = 0;
  for (const SizeMix::Entry& e : mixed->entries) (e.single ? pod_gpus : group_gpus) += e.weight * e.gpus;
  CHECK(pod_gpus == doctest::Approx(group_gpus));
  CHECK(mixed->entries.front().single);
  CHECK(mixed->entries.front().gpus == 1);
  CHECK_FALSE(mixed->entries.back().single);
  CHECK(mixed->entries.back().gpus == 128);
}

TEST_CASE("groups workload: the shapes, their sizes, and the labelled cluster they build") {
  auto h100 = GroupClusterShape("h100-spine");
  REQUIRE(h100.ok());
  CHECK(h100->nodes() == 256);
  CHECK(h100->gpus() == 2048);
  CHECK(h100->DomainGpus(0) == 1024);  // a spine
  CHECK(h100->DomainGpus(1) == 256);   // a block of 32 nodes
  CHECK(h100->DomainGpus(2) == 8);     // a node
  CHECK(ShapeLevels(*h100, kLevels) == std::vector<int>{kSpine, kBlock, kHost});

  auto nvl = GroupClusterShape("gb200-nvl72");
  REQUIRE(nvl.ok());
  CHECK(nvl->nodes() == 144);
  CHECK(nvl->DomainGpus(1) == 72);  // one NVLink domain: 18 nodes of 4
  CHECK(ShapeLevels(*nvl, kLevels) == std::vector<int>{kBlock, kAccel, kHost});

  cluster::ClusterModel model;
  AddShapeNodes(*nvl, model);
  groups::DomainMap map = groups::DomainMap::FromModel(model, kLevels);
  CHECK(map.size() == 144);
  CHECK(map.domain_count(kBlock) == 2);
  CHECK(map.domain_count(kAccel) == 8);
  std::map<uint32_t, int> per_clique;
  for (size_t i = 0; i < map.size(); ++i) per_clique[map.id(i, kAccel)]++;
  for (const auto& [_, n] : per_clique) CHECK(n == 18);
  CHECK(map.domain_name(kAccel, map.id(0, kAccel)) == "d0/d0-0");
  groups::GroupNodes nodes = groups::ReadGroupNodes(model, map);
  for (const auto& n : nodes.nodes) {
    REQUIRE(n.topology);
    CHECK(n.free.size() == 4);
  }
}

TEST_CASE("groups workload: a job becomes members of whole nodes, required at the narrowest level holding it") {
  auto h100 = *GroupClusterShape("h100-spine");
  groups::GroupSpec one = GroupForJob(h100, kLevels, 2, 0);
  CHECK(one.size == 1);
  CHECK(one.gpus == 2);
  CHECK(one.level == kHost);
  CHECK(one.policy == groups::LevelPolicy::kRequired);
  groups::GroupSpec four = GroupForJob(h100, kLevels, 32, 1);
  CHECK(four.size == 4);
  CHECK(four.gpus == 8);
  CHECK(four.level == kBlock);
  CHECK(GroupForJob(h100, kLevels, 512, 2).level == kSpine);
  groups::GroupSpec all = GroupForJob(h100, kLevels, 2048, 3);
  CHECK(all.size == 256);
  CHECK(all.level == kSpine);
  CHECK(all.policy == groups::LevelPolicy::kPreferred);  // more than a spine: anywhere

  auto nvl = *GroupClusterShape("gb200-nvl72");
  groups::GroupSpec rack = GroupForJob(nvl, kLevels, 64, 4);
  CHECK(rack.size == 16);
  CHECK(rack.gpus == 4);
  CHECK(rack.level == kAccel);  // 64 GPUs fit one NVLink domain
  CHECK(GroupForJob(nvl, kLevels, 128, 5).level == kBlock);
}

TEST_CASE("groups workload: arrivals follow the mix and the lifetimes, the same for the same seed") {
  auto mix = *GroupSizeMix("helios-fit");
  auto shape = *GroupClusterShape("h100-spine");
  auto a = GenerateGroups(mix, shape, kLevels, 20000, 100, 42);
  auto b = GenerateGroups(mix, shape, kLevels, 20000, 100, 42);
  REQUIRE(a.size() == 20000);
  double gpus = 0, life = 0;
  int ones = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].total_gpus == b[i].total_gpus);
    CHECK(a[i].lifetime == b[i].lifetime);
    CHECK(a[i].lifetime >= 1);
    gpus += a[i].total_gpus;
    life += a[i].lifetime;
    ones += a[i].total_gpus == 1;
  }
  // Sampling error of 20,000 draws: well under these bounds.
  CHECK(gpus / a.size() == doctest::Approx(mix.MeanGpus()).epsilon(0.05));
  CHECK(life / a.size() == doctest::Approx(100.5).epsilon(0.05));  // ceil adds half an arrival
  CHECK(ones / 20000.0 == doctest::Approx(64.0 / 127).epsilon(0.05));
  auto c = GenerateGroups(mix, shape, kLevels, 100, 100, 43);
  bool differ = false;
  for (size_t i = 0; i < c.size(); ++i) differ = differ || c[i].total_gpus != a[i].total_gpus;
  CHECK(differ);
}

}  // namespace
}  // namespace topofit::bench
