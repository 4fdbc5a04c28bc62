#include "bench/groups_replay.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "extender/cluster/cluster_model.h"

namespace topofit::bench {
namespace {

TEST_CASE("groups replay: one stream of arrivals for all - only no-gang holds GPUs of partly placed groups") {
  GroupReplayOptions o;
  o.shape = "gb200-nvl72";
  o.mix = "multi-node";
  o.churn_arrivals = 60;
  o.seed = 3;
  auto rows = RunGroupReplay(o);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 4);
  for (const GroupReplayRow& r : *rows) {
    CAPTURE(r.policy);
    // The churn's arrivals, then the fill's, as many as the GPUs free when it began call for.
    CHECK(r.arrivals > o.churn_arrivals);
    CHECK(r.capacity == 576);
    CHECK(r.placed <= r.arrivals);
    CHECK(r.one_domain <= r.spanning);
    CHECK(r.unallocated >= 0);
    CHECK(r.unallocated <= r.capacity);
    if (r.policy != "no-gang") {
      CHECK(r.partial_gpus == 0);
      // The fill stops once the GPUs asked reach those free when it began: what stays unallocated was
      // asked by a refused arrival (the last one may ask more than was left).
      CHECK(r.refused_with_room + r.refused_without_room >= r.unallocated);
    }
  }
  // Deterministic for a seed.
  auto again = RunGroupReplay(o);
  REQUIRE(again.ok());
  for (size_t i = 0; i < rows->size(); ++i) {
    CHECK((*again)[i].placed == (*rows)[i].placed);
    CHECK((*again)[i].unallocated == (*rows)[i].unallocated);
  }
}

TEST_CASE("groups replay: the fill's refusals by cause - no room for the members at all, or room but not in a domain") {
  GroupReplayOptions o;
  o.shape = "h100-spine";
  o.mix = "multi-node";
  o.churn_arrivals = 200;
  o.seed = 2;
  auto rows = RunGroupReplay(o);
  REQUIRE(rows.ok());
  int64_t refused = 0;
  for (const GroupReplayRow& r : *rows) refused += r.refused_with_room + r.refused_without_room;
  CHECK(refused > 0);
  CHECK(FormatGroupReplay(o, *rows).find("had not") == std::string::npos);  // only when asked
  o.refusals = true;
  const std::string table = FormatGroupReplay(o, *rows);
  CHECK(table.find(fmt::format("| topofit | {} | {} | {} |", (*rows)[0].unallocated, (*rows)[0].refused_with_room,
                               (*rows)[0].refused_without_room)) != std::string::npos);
}

TEST_CASE("groups replay: the table names the run and every policy") {
  GroupReplayOptions o;
  o.shape = "gb200-nvl72";
  o.churn_arrivals = 0;
  auto rows = RunGroupReplay(o);
  REQUIRE(rows.ok());
  const std::string table = FormatGroupReplay(o, *rows);
  CHECK(table.find("shape gb200-nvl72, mix helios-fit, load 0.90, 0 churn arrivals, seed 1") == 0);
  CHECK(table.find("| predicted all-reduce GB/s, groups of 2+ members |") != std::string::npos);
  for (const char* p : {"| topofit |", "| no-gang |", "| kueue-bestfit |", "| volcano-tier |"}) {
    CHECK(table.find(p) != std::string::npos);
  }
  GroupReplayOptions two = o;
  two.seeds = 2;
  auto sums = RunGroupReplay(two);
  REQUIRE(sums.ok());
  CHECK((*sums)[0].capacity == 2 * 576);
  CHECK(FormatGroupReplay(two, *sums).find("seeds 1..2 (sums)") != std::string::npos);
  for (const GroupReplayRow& r : *sums) {  // Each seed's counts kept for groups_spread.h, adding up to the sums.
    REQUIRE(r.by_seed.size() == 2);
    CHECK(r.by_seed[0].unallocated + r.by_seed[1].unallocated == r.unallocated);
    CHECK(r.by_seed[0].one_domain + r.by_seed[1].one_domain == r.one_domain);
    CHECK(r.gang == (r.policy != "no-gang"));
    int arrivals = 0, placed = 0;  // By job size, adding up to the row's counts.
    for (const auto& [gpus, c] : r.by_size) {
      arrivals += c.arrivals;
      placed += c.placed;
      CHECK(c.placed <= c.arrivals);
    }
    CHECK(arrivals == r.arrivals);
    CHECK(placed == r.placed);
  }
  two.by_size = true;
  const std::string by_size = FormatGroupReplay(two, *sums);
  CHECK(by_size.find("| jobs of 1 GPUs |") != std::string::npos);
  CHECK(by_size.find("| GPUs of the placed groups |") != std::string::npos);
  CHECK(RunGroupReplay(GroupReplayOptions{"ring", "helios-fit"}).error() ==
        "unknown cluster shape 'ring': expected h100-spine or gb200-nvl72");
}

TEST_CASE("groups replay: the predicted all-reduce bandwidth is the slowest hop by the levels crossed") {
  auto check = [](const std::string& name, std::vector<std::vector<int>> groups, std::vector<double> want) {
    auto shape = GroupClusterShape(name);
    REQUIRE(shape.ok());
    cluster::ClusterModel model;
    AddShapeNodes(*shape, model);
    const groups::DomainLevels levels = groups::DomainLevels::Defaults();
    const groups::DomainMap map = groups::DomainMap::FromModel(model, levels);
    for (size_t g = 0; g < groups.size(); ++g) {
      std::vector<groups::MemberPlan> members;
      for (int i : groups[g]) {
        groups::MemberPlan m;
        m.node = static_cast<int>(*map.Find(fmt::format("node-{:04d}", i)));
        members.push_back(m);
      }
      CAPTURE(name);
      CAPTURE(g);
      CHECK(PredictedAllReduceGbps(*shape, map, ShapeLevels(*shape, levels), members) == want[g]);
    }
  };
  // gb200-nvl72: 18 nodes an NVLink domain (nodes 0-17, 18-35, ...), 4 of them a block.
  check("gb200-nvl72", {{0, 0}, {0, 17}, {17, 18}, {0, 100}}, {900, 900, 50, 50});
  // h100-spine: NVLink inside a node only; 32 nodes a block, 4 blocks a spine.
  check("h100-spine", {{3, 3}, {0, 31}, {31, 32}, {0, 200}}, {450, 50, 50, 50});
}

}  // namespace
}  // namespace topofit::bench
