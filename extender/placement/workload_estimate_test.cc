// WorkloadEstimate: shares, decay, de-duplication and the bound on shapes, worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "extender/placement/workload_estimate.h"

namespace topofit::placement {
namespace {

cluster::PodRequest Pod(const std::string& uid, int gpus, int64_t cpu_milli = 4000, int64_t mem = int64_t(16) << 30,
               std::vector<std::string> products = {}) {
  cluster::PodRequest r;
  r.uid = uid;
  r.namespace_ = "default";
  r.name = uid;
  r.gpus = gpus;
  r.cpu_milli = cpu_milli;
  r.memory_bytes = mem;
  r.gpu_products = std::move(products);
  return r;
}

TEST_CASE("workload: shares of the shapes seen, GPU pods only, each uid once") {
  WorkloadEstimate est(WorkloadOptions{.half_life = 1e12});  // Practically no decay.
  CHECK(est.Snapshot()->shapes.empty());
  CHECK(est.Observe(Pod("a", 1)));
  CHECK(est.Observe(Pod("b", 1)));
  CHECK(est.Observe(Pod("c", 8, 96000, int64_t(512) << 30, {"V100M32", "A100"})));
  CHECK_FALSE(est.Observe(Pod("a", 1)));    // Retried filter: counted once.
  CHECK_FALSE(est.Observe(Pod("cpu", 0)));  // No GPU: not part of the GPU workload.
  cluster::PodRequest bad = Pod("bad", 1);
  bad.error = "invalid topofit.io/min-link 'X'";
  CHECK_FALSE(est.Observe(bad));
  auto snap = est.Snapshot();
  CHECK(snap->observed == 3);
  REQUIRE(snap->shapes.size() == 2);
  CHECK(snap->shapes[0].gpus == 1);
  CHECK(snap->shapes[0].weight == doctest::Approx(2.0 / 3));
  CHECK(snap->shapes[1].gpus == 8);
  CHECK(snap->shapes[1].weight == doctest::Approx(1.0 / 3));
  CHECK(snap->shapes[1].products == std::vector<std::string>{"A100", "V100M32"});  // Sorted.
  CHECK(snap->shapes[1].product_ids.size() == 2);
  CHECK(snap->shapes[1].cpu_milli == 96000);
}

TEST_CASE("workload: similar requests share a shape holding their weighted mean, others do not") {
  WorkloadEstimate est(WorkloadOptions{.half_life = 1e12});
  est.Observe(Pod("a", 1, 4500));
  est.Observe(Pod("b", 1, 5000));   // 2 log2 4500 = 24.3, 2 log2 5000 = 24.6: both in half-octave 24.
  est.Observe(Pod("c", 1, 16000));  // Two octaves up: a shape of its own.
  est.Observe(Pod("d", 1, 4000, int64_t(16) << 30, {"T4"}));  // Same size, a GPU model: its own.
  auto snap = est.Snapshot();
  REQUIRE(snap->shapes.size() == 3);
  CHECK(snap->shapes[0].cpu_milli == 4750);
  CHECK(snap->shapes[0].weight == doctest::Approx(0.5));
}

TEST_CASE("workload: a pod seen half_life pods ago weighs half as much as the newest") {
  WorkloadEstimate est(WorkloadOptions{.half_life = 10});
  est.Observe(Pod("old", 2));
  for (int i = 0; i < 10; ++i) est.Observe(Pod("new" + std::to_string(i), 1));
  // old weighs 1, the newest 2^(10/10) = 2, the 1-GPU pods sum_{i=1..10} 2^(i/10).
  double ones = 0;
  for (int i = 1; i <= 10; ++i) ones += std::exp2(i / 10.0);
  auto snap = est.Snapshot();
  REQUIRE(snap->shapes.size() == 2);
  CHECK(snap->shapes[1].gpus == 2);
  CHECK(snap->shapes[1].weight == doctest::Approx(1.0 / (1.0 + ones)));
}

TEST_CASE("workload: beyond max_shapes a new shape replaces the lightest, Reset forgets everything") {
  WorkloadEstimate est(WorkloadOptions{.half_life = 1e12, .max_shapes = 2});
  est.Observe(Pod("a", 1));
  est.Observe(Pod("b", 1));
  est.Observe(Pod("c", 2));
  est.Observe(Pod("d", 4));  // Replaces the 2-GPU shape (weight 1 < 2).
  auto snap = est.Snapshot();
  REQUIRE(snap->shapes.size() == 2);
  CHECK(snap->shapes[0].gpus == 1);
  CHECK(snap->shapes[1].gpus == 4);
  CHECK(snap->shapes[1].weight == doctest::Approx(1.0 / 3));
  est.Reset();
  CHECK(est.Snapshot()->shapes.empty());
  CHECK(est.Observe(Pod("a", 1)));  // Its uid is forgotten too.
}

}  // namespace
}  // namespace topofit::placement
