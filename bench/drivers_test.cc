// Drivers and metrics on traces whose outcome is known by hand.
#include <doctest/doctest.h>

#include "bench/paper_driver.h"
#include "bench/policy.h"
#include "bench/summary.h"
#include "bench/timed_driver.h"

using namespace topofit;
using namespace topofit::bench;

namespace {

std::unique_ptr<SimCluster> TwoNodes(int gpus_each) {
  auto map = GpuModelMap::Parse("", "");
  std::string profile = "generic-pcie-" + std::to_string(gpus_each);
  auto c = SimCluster::Build({NodeSpec{"a", 64000, 262144, gpus_each, "M", profile},
                              NodeSpec{"b", 64000, 262144, gpus_each, "M", profile}},
                             *map);
  REQUIRE(c.ok());
  return std::move(c).value();
}

PodSpec Pod(std::string name, int gpus, int64_t t = 0, std::optional<int64_t> del = std::nullopt) {
  PodSpec p;
  p.name = std::move(name);
  p.gpus = gpus;
  p.cpu_milli = 1000;
  p.memory_mib = 1024;
  p.creation_time = t;
  p.deletion_time = del;
  return p;
}

}  // namespace

TEST_CASE("paper protocol: 2 nodes x 4 GPUs, pods 3,3,2 - the 2-GPU pod fails, 25% unallocated at 100%") {
  auto c = TwoNodes(4);
  std::vector<PodSpec> pods{Pod("p3a", 3), Pod("p3b", 3), Pod("p2", 2)};
  for (const auto& info : AllPolicies()) {
    auto policy = info.make(PolicyOptions{});
    RunMetrics m = RunPaperOnce(*c, *policy, pods, {0, 1, 2}, 42);
    CAPTURE(info.name);
    REQUIRE(m.error.empty());
    CHECK(m.failed_pods == 1);
    CHECK(m.failed_pods_at_100 == 1);
    CHECK(m.unallocated_pct_at_100 == doctest::Approx(25.0));
    REQUIRE(m.curve.size() == 3);
    CHECK(m.curve[0].x == doctest::Approx(37.5));
    CHECK(m.curve[1].allocated_pct == doctest::Approx(75.0));
    CHECK(m.curve[2].x == doctest::Approx(100.0));
    CHECK(m.curve[2].allocated_pct == doctest::Approx(75.0));
    // Where the gap is: one GPU free on each 4-GPU node of model M, the 2-GPU pod failed.
    CHECK(m.unallocated_at_100 == std::map<std::string, int64_t>{{"M x4, 1 free", 2}});
    CHECK(m.failed_at_100 == std::map<std::string, int64_t>{{"2 GPUs", 1}});
  }
}

TEST_CASE("paper protocol: failed pods by request name their gpu_spec models, no entry without a free GPU") {
  auto c = TwoNodes(2);  // capacity 4, model M
  PodSpec other = Pod("other", 1);
  other.gpu_models = {"V100M16", "V100M32"};
  std::vector<PodSpec> pods{Pod("two", 2), other, Pod("two-more", 2)};
  auto policy = AllPolicies()[1].make(PolicyOptions{});
  RunMetrics m = RunPaperOnce(*c, *policy, pods, {0, 1, 2}, 1);  // 50%, 75% (fails: no V100), 125%
  CHECK(m.failed_at_100 == std::map<std::string, int64_t>{{"1 GPU on V100M16|V100M32", 1}});
  CHECK(m.unallocated_at_100.empty());  // Both nodes full after the arrival crossing 100%.
}

TEST_CASE("paper protocol: interpolates at exactly 100% arrival") {
  auto c = TwoNodes(2);  // capacity 4
  std::vector<PodSpec> pods{Pod("one", 1), Pod("three", 3)};
  auto policy = AllPolicies()[1].make(PolicyOptions{});
  // Arrivals: 1 GPU (25%, placed), 3 GPUs (100%, fails: no node has 3).
  RunMetrics m = RunPaperOnce(*c, *policy, pods, {0, 1}, 1);
  CHECK(m.unallocated_pct_at_100 == doctest::Approx(75.0));
  // Arrivals 3 -> 1 GPU-pods crossing 100% between 75% and 125%: interpolate halfway.
  std::vector<PodSpec> twos{Pod("two", 2)};
  RunMetrics n = RunPaperOnce(*c, *policy, twos, {0, 0, 0}, 1);  // 50%, 100%: both placed; 150% fails
  CHECK(n.unallocated_pct_at_100 == doctest::Approx(0.0));
}

TEST_CASE("paper protocol stops once the arrived GPU request reaches 1.3x capacity") {
  std::vector<PodSpec> ones{Pod("cpu", 0), Pod("one", 1)};
  auto seq = PaperSequence(ones, 10, 1.3, 42);
  int gpus = 0;
  for (int i : seq) gpus += ones[i].gpus;
  CHECK(gpus == 13);
  CHECK(ones[seq.back()].gpus == 1);  // The last draw is the one that reached 13.
  std::vector<PodSpec> twos{Pod("two", 2)};
  CHECK(PaperSequence(twos, 10, 1.3, 42).size() == 7);  // 14 >= 13
  CHECK(PaperSequence(ones, 10, 1.3, 42) == seq);       // Seeded.
}

TEST_CASE("time-ordered replay: a departure frees GPUs for a pod arriving at the same second") {
  auto map = GpuModelMap::Parse("", "");
  auto c = SimCluster::Build({NodeSpec{"n", 64000, 262144, 2, "M", "generic-pcie-2"}}, *map);
  REQUIRE(c.ok());
  std::vector<PodSpec> pods{Pod("a", 2, 0, 10), Pod("b", 2, 5), Pod("c", 2, 10, 20), Pod("d", 1, 20)};
  auto policy = AllPolicies()[1].make(PolicyOptions{});
  RunMetrics m = RunTimeOrdered(**c, *policy, pods, 1);
  CHECK(m.failed_pods == 1);  // b: a still holds both GPUs at t=5
  CHECK(m.arrivals == 4);
  REQUIRE(m.curve.size() == 4);
  CHECK(m.curve[2].allocated_pct == doctest::Approx(100.0));  // c placed after a left
  CHECK(m.curve[3].allocated_pct == doctest::Approx(50.0));   // d placed after c left
  // Unallocated over time: 0% for [0,20), and the replay ends at 20.
  CHECK(m.unallocated_pct_at_100 == doctest::Approx(0.0));
}

TEST_CASE("summary: mean and sample stddev over seeds, best-set share, percentiles") {
  RunMetrics a, b;
  a.policy = b.policy = "x";
  a.unallocated_pct_at_100 = 10;
  b.unallocated_pct_at_100 = 20;
  a.multi = {{2, 50, 50}, {4, 25, 50}};
  b.multi = {{8, 10, 10}};
  a.decision_us = {1, 2, 3, 4};
  b.decision_us = {100};
  a.no_gpu_decision_us = {7};
  b.no_gpu_decision_cpu_us = {5, 9};
  a.unallocated_at_100 = {{"M x8, 1 free", 3}};
  b.unallocated_at_100 = {{"M x8, 1 free", 1}, {"M x2, 2 free", 2}};
  a.failed_at_100 = {{"8 GPUs", 1}};
  a.curve = {{50, 50}, {100, 90}};
  b.curve = {{50, 40}, {100, 80}};
  auto rows = Summarize({a, b});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].unallocated_gpu_pct == doctest::Approx(15));
  CHECK(rows[0].unallocated_gpu_pct_stddev == doctest::Approx(7.0710678));
  CHECK(rows[0].unallocated_gpu_pct_runs == std::vector<double>{10, 20});
  CHECK(rows[0].unallocated_at_100_by_node == std::map<std::string, double>{{"M x2, 2 free", 1}, {"M x8, 1 free", 2}});
  CHECK(rows[0].failed_at_100_by_request == std::map<std::string, double>{{"8 GPUs", 0.5}});
  CHECK(rows[0].multi_gpu_best_set_pct == doctest::Approx(200.0 / 3));
  CHECK(rows[0].multi_gpu_mean_bandwidth_gbps == doctest::Approx(85.0 / 3));
  CHECK(rows[0].decision_us_p50 == doctest::Approx(3));
  CHECK(rows[0].decision_us_p99 == doctest::Approx(100));
  CHECK(rows[0].no_gpu_decision_us_p99 == doctest::Approx(7));
  CHECK(rows[0].no_gpu_decision_cpu_us_p50 == doctest::Approx(5));
  CHECK(rows[0].decision_cpu_us_p99 == 0);  // None recorded.
  REQUIRE(rows[0].curve.size() == 101);
  CHECK(rows[0].curve[50].allocated_pct == doctest::Approx(45));
  CHECK(rows[0].curve[100].allocated_pct == doctest::Approx(85));
}
