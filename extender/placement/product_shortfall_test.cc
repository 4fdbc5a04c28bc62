// ProductShortfall against a max-flow oracle: bound demand minus the most of it the free GPUs can carry.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "extender/k8s/objects.h"
#include "extender/cluster/cluster_model.h"
#include "extender/placement/product_shortfall.h"
#include "extender/cluster/testing/builders.h"
#include "extender/cluster/node_state.h"

namespace topofit::placement {
namespace {

PodShape Shape(int gpus, double weight, std::vector<uint32_t> products) {
  PodShape s;
  s.gpus = gpus;
  s.weight = weight;
  s.product_ids = std::move(products);
  return s;
}

// The free GPUs of two models.
cluster::FreeGpus Free(uint32_t a, int64_t free_a, uint32_t b, int64_t free_b) {
  cluster::FreeGpus free;
  free.Add(a, free_a);
  free.Add(b, free_b);
  return free;
}

// Edmonds-Karp on a dense capacity matrix: source 0, shapes 1..S, models S+1..S+M, sink S+M+1.
double MaxFlow(std::vector<std::vector<double>> cap, int source, int sink) {
  const int n = int(cap.size());
  double flow = 0;
  for (;;) {
    std::vector<int> prev(n, -1);
    prev[source] = source;
    std::vector<int> queue{source};
    for (size_t q = 0; q < queue.size() && prev[sink] < 0; ++q)
      for (int v = 0; v < n; ++v)
        if (prev[v] < 0 && cap[queue[q]][v] > 1e-12) {
          prev[v] = queue[q];
          queue.push_back(v);
        }
    if (prev[sink] < 0) return flow;
    double push = std::numeric_limits<double>::infinity();
    for (int v = sink; v != source; v = prev[v]) push = std::min(push, cap[prev[v]][v]);
    for (int v = sink; v != source; v = prev[v]) {
      cap[prev[v]][v] -= push;
      cap[v][prev[v]] += push;
    }
    flow += push;
  }
}

// What the bound shapes ask for over the horizon `total` minus what the free GPUs can carry.
double Oracle(const std::vector<PodShape>& shapes, const std::vector<uint32_t>& models,
              const std::vector<double>& free, double total) {
  double gpu_weight = 0;
  for (const auto& s : shapes) gpu_weight += s.weight * s.gpus;
  const int S = int(shapes.size()), M = int(models.size()), n = S + M + 2;
  std::vector<std::vector<double>> cap(n, std::vector<double>(n, 0));
  double demand = 0;
  for (int i = 0; i < S; ++i) {
    if (shapes[i].product_ids.empty()) continue;
    const double d = shapes[i].weight * shapes[i].gpus / gpu_weight * total;
    cap[0][1 + i] = d;
    demand += d;
    for (int j = 0; j < M; ++j)
      if (std::find(shapes[i].product_ids.begin(), shapes[i].product_ids.end(), models[j]) !=
          shapes[i].product_ids.end())
        cap[1 + i][1 + S + j] = 1e18;
  }
  for (int j = 0; j < M; ++j) cap[1 + S + j][n - 1] = free[j];
  return demand - MaxFlow(cap, 0, n - 1);
}

TEST_CASE("model shortfall: equals bound demand minus the max flow, before and after every placement") {
  std::mt19937 rng(7);
  const std::vector<uint32_t> models{cluster::GpuProductId("sf-a"), cluster::GpuProductId("sf-b"), cluster::GpuProductId("sf-c"),
                                     cluster::GpuProductId("sf-d")};
  const uint32_t unbound_model = cluster::GpuProductId("sf-none");
  int cases = 0, short_cases = 0;
  for (int t = 0; t < 400; ++t) {
    std::vector<PodShape> shapes;
    const int n_shapes = 1 + int(rng() % 6);
    for (int i = 0; i < n_shapes; ++i) {
      std::vector<uint32_t> products;
      if (rng() % 3 != 0)  // A third may use any model.
        for (uint32_t m : models)
          if (rng() % 3 == 0) products.push_back(m);
      shapes.push_back(Shape(1 << (rng() % 4), 1 + rng() % 20, products));
    }
    cluster::FreeGpus free;
    std::vector<double> model_free;
    for (uint32_t m : models) {
      const int f = int(rng() % 40);
      free.Add(m, f);
      model_free.push_back(f);
    }
    free.Add(unbound_model, int(rng() % 200));
    ProductShortfall sf(shapes, free, {}, /*spread=*/false);
    const double before = Oracle(shapes, models, model_free, double(free.total));
    CHECK(sf.Now() == doctest::Approx(before).epsilon(1e-9));
    short_cases += before > 1e-9;
    for (size_t j = 0; j <= models.size(); ++j) {
      const uint32_t product = j < models.size() ? models[j] : unbound_model;
      const int k = 1 + int(rng() % 4);
      if (k > free.Of(product)) continue;
      std::vector<double> after_free = model_free;
      if (j < models.size()) after_free[j] -= k;
      const double after = Oracle(shapes, models, after_free, double(free.total - k));
      CHECK(sf.Delta(product, k) == doctest::Approx(after - before).epsilon(1e-9));
      ++cases;
    }
  }
  CHECK(cases > 1000);
  CHECK(short_cases > 50);  // The generator reaches both regimes.
  CHECK(short_cases < 350);
}

TEST_CASE("model shortfall: a pod that may run anywhere pays for a scarce model's GPUs, not a plentiful one's") {
  const uint32_t t4 = cluster::GpuProductId("T4"), g2 = cluster::GpuProductId("G2");
  // 20% of the GPUs asked for must be T4; 100 GPUs free, 22 of them T4: 2 to spare.
  std::vector<PodShape> shapes{Shape(1, 0.8, {}), Shape(1, 0.2, {t4})};
  const cluster::FreeGpus free = Free(t4, 22, g2, 78);
  ProductShortfall sf(shapes, free, {}, /*spread=*/false);
  CHECK(sf.Now() == 0);
  CHECK(sf.Delta(t4, 1) == 0);                             // 21 left for 19.8 of demand.
  CHECK(sf.Delta(t4, 4) == doctest::Approx(4 - 0.8 - 2));  // 18 left for 19.2: 1.2 short.
  CHECK(sf.Delta(g2, 4) == 0);
  // No shape bound to a model: nothing to pay anywhere.
  std::vector<PodShape> free_shapes{Shape(1, 1, {})};
  CHECK_FALSE(ProductShortfall::AnyBound(free_shapes));
  CHECK(ProductShortfall(free_shapes, free).Delta(t4, 4) == 0);
}

TEST_CASE("model shortfall: when a model is short already, its bound pods lower it and others raise it") {
  const uint32_t t4 = cluster::GpuProductId("T4"), g2 = cluster::GpuProductId("G2");
  std::vector<PodShape> shapes{Shape(1, 0.5, {}), Shape(1, 0.5, {t4})};
  const cluster::FreeGpus free = Free(t4, 10, g2, 90);
  ProductShortfall sf(shapes, free, {}, /*spread=*/false);
  CHECK(sf.Now() == doctest::Approx(40));           // 50 T4 GPUs asked for, 10 free.
  CHECK(sf.Delta(t4, 1) == doctest::Approx(0.5));   // One fewer T4 free, half a GPU less asked.
  CHECK(sf.Delta(g2, 1) == doctest::Approx(-0.5));  // Only less asked.
}

TEST_CASE("model shortfall: with the demand's spread, the expected excess, and a margin before the mean runs out") {
  const uint32_t t4 = cluster::GpuProductId("T4"), g2 = cluster::GpuProductId("G2");
  // 10% of the GPUs asked for are T4-bound 1-GPU pods and 20% T4-bound 4-GPU pods: over 1,000 free
  // GPUs, 300 wanted, variance 1000 x (0.1 x 1 + 0.2 x 4) = 900 (compound Poisson).
  std::vector<PodShape> shapes{Shape(1, 0.7, {}), Shape(1, 0.1, {t4}), Shape(4, 0.05, {t4})};
  double gpu_weight = 0;
  for (const auto& s : shapes) gpu_weight += s.weight * s.gpus;
  const double g1 = shapes[1].weight / gpu_weight, g4 = 4 * shapes[2].weight / gpu_weight;
  for (int t4_free : {200, 300, 340, 400}) {
    CAPTURE(t4_free);
    const cluster::FreeGpus free = Free(t4, t4_free, g2, 1000 - t4_free);
    ProductShortfall sf(shapes, free);
    // E[max(0, X - f)], X normal, by the midpoint rule over mean +- 10 sigma.
    const double mu = (g1 + g4) * 1000, var = (g1 + 4 * g4) * 1000, sigma = std::sqrt(var);
    double expected = 0;
    const int steps = 200000;
    for (int i = 0; i < steps; ++i) {
      const double x = mu - 10 * sigma + (i + 0.5) * 20 * sigma / steps;
      expected += std::max(0.0, x - t4_free) * std::exp(-0.5 * (x - mu) * (x - mu) / var) /
                  std::sqrt(2 * 3.14159265358979323846 * var) * 20 * sigma / steps;
    }
    CHECK(sf.Now() == doctest::Approx(expected).epsilon(1e-6));
    // Exactly the mean: nothing short while free covers it.
    ProductShortfall exact(shapes, free, {}, /*spread=*/false);
    CHECK(exact.Now() == doctest::Approx(std::max(0.0, mu - t4_free)));
    // One T4 GPU taken by a pod that could go elsewhere costs more the closer free is to the mean:
    // with the spread it costs already 40 GPUs (1.3 sigma) above it.
    const double cost = sf.Delta(t4, 1), cost_g2 = sf.Delta(g2, 1);
    CHECK(cost > cost_g2);
    if (t4_free == 340) CHECK(cost > 0.05);
    if (t4_free == 340) CHECK(exact.Delta(t4, 1) <= 0);
  }
}

TEST_CASE("model shortfall: multi-GPU pods of any model count where their best ring is, beside bound demand only") {
  const uint32_t v100 = cluster::GpuProductId("V100"), g2 = cluster::GpuProductId("G2");
  // 10% of the GPUs asked for are V100-bound, 40% come in 8-GPU pods of any model whose best ring is
  // on the V100 nodes; 100 GPUs free, 40 of them V100.
  std::vector<PodShape> shapes{Shape(1, 0.5, {}), Shape(1, 0.1, {v100}), Shape(8, 0.05, {})};
  const std::vector<BestRingProducts> rings{{8, cluster::TopologyPolicy::kBestEffort, {v100}}};
  const cluster::FreeGpus free = Free(v100, 40, g2, 60);
  // Bound alone: 10 of 40 V100 GPUs wanted - plenty to spare. With the 8-GPU pods there: 50 of 40.
  CHECK(ProductShortfall(shapes, free, {}, false).Now() == 0);
  ProductShortfall both(shapes, free, rings, false);
  CHECK(both.Now() == doctest::Approx(10));
  CHECK(both.Delta(v100, 1) == doctest::Approx(1 - 0.5));  // One fewer V100 free, half a GPU less asked.
  CHECK(both.Delta(g2, 1) == doctest::Approx(-0.5));
  REQUIRE(both.demands().size() == 2);
  CHECK_FALSE(both.demands()[0].best_ring);
  CHECK(both.demands()[1].best_ring);
  CHECK(DescribeShortfall(both) == "GPUs model-bound pods will want / free: V100 10/40, best rings on V100 40/40; short 10");
  // Without pods bound to a model, the 8-GPU pods' claim alone costs nothing: they could run elsewhere.
  std::vector<PodShape> unbound{Shape(1, 0.6, {}), Shape(8, 0.05, {})};
  CHECK(ProductShortfall(unbound, free, rings, false).Delta(v100, 1) == 0);
  CHECK(ProductShortfall(unbound, free, rings, false).demands().empty());
}

TEST_CASE("model shortfall: the best ring of each multi-GPU size is found on the node types of the cluster") {
  cluster::ClusterModel model;
  auto node = [&](const std::string& name, int gpus, const std::string& topology, const std::string& product) {
    model.ApplyNode(cluster::testing::MakeNode(name, gpus, topology, {{k8s::kGfdProductLabel, product}}));
  };
  node("dgx", 8, "dgx1-v100", "V100");
  node("pcie", 8, "pcie-8-dual-socket", "G2");
  node("t4", 2, "phb-2-workstation", "T4");
  Placer placer;
  std::vector<PodShape> shapes{Shape(8, 1, {}), Shape(2, 1, {}), Shape(4, 1, {cluster::GpuProductId("G2")})};
  shapes[1].policy = cluster::TopologyPolicy::kNone;  // No topology policy: goes anywhere, not counted.
  auto reader = model.Read();
  const cluster::FreeGpus free = reader.FreeByProduct();
  CHECK(free.types.size() == 3);
  const auto rings = BestRingProductsOf(placer, free, shapes);
  REQUIRE(rings.size() == 1);  // The bound 4-GPU shape is bound already.
  CHECK(rings[0].gpus == 8);
  CHECK(rings[0].products == std::vector<uint32_t>{cluster::GpuProductId("V100")});
}

}  // namespace
}  // namespace topofit::placement
