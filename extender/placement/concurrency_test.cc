// Stress: many threads binding on a few nodes while others filter, prioritize and apply pods.
// Asserts that no GPU is ever held by two pods and that the counts add up.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement {
namespace {

using cluster::testing::MakeNode;
using cluster::testing::MakePod;
using cluster::testing::Request;

// Every holding of the node has disjoint GPUs, all usable, none of them free.
bool Consistent(const cluster::NodeState& node) {
  GpuSet seen;
  for (const cluster::Holding& h : node.Holdings()) {
    if (h.gpus.Intersects(seen) || !h.gpus.IsSubsetOf(node.usable())) return false;
    seen = seen | h.gpus;
  }
  return true;
}

TEST_CASE("concurrency: many binders on few nodes never double-grant a GPU") {
  cluster::FakeClock clock;
  cluster::ClusterModel model(cluster::ModelOptions{.reservation_ttl = std::chrono::seconds(30), .clock = &clock});
  Pipeline pipeline(&model);
  std::vector<std::string> names{"d0", "d1", "d2", "p0"};
  for (int i = 0; i < 3; ++i) model.ApplyNode(MakeNode(names[i], 8, "dgx1-v100", {{k8s::kGfdProductLabel, "V100"}}));
  model.ApplyNode(MakeNode("p0", 4, "pcie-4-single-socket"));

  constexpr int kThreads = 8;
  constexpr int kIterations = 400;
  struct Grant {
    std::string node;
    GpuSet gpus;
  };
  std::vector<std::map<std::string, Grant>> kept(kThreads);
  std::atomic<bool> stop{false};
  std::atomic<int> violations{0};
  std::atomic<int> granted{0};

  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      while (!stop.load()) {
        cluster::PodRequest pod = Request("reader" + std::to_string(r), 1 + r * 3);
        if (r == 1) pod.gpu_products = {"V100"};  // Model-bound: prioritize reads the free GPUs by model.
        (void)pipeline.Filter(pod, names);
        (void)pipeline.Prioritize(pod, names);
        if (model.Read().FreeByProduct().total < 0) violations.fetch_add(1);
        auto reader = model.Read();
        reader.ForEach([&](const cluster::NodeState& n) {
          if (!Consistent(n)) violations.fetch_add(1);
        });
      }
    });
  }
  std::vector<std::thread> binders;
  for (int t = 0; t < kThreads; ++t) {
    binders.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      for (int i = 0; i < kIterations; ++i) {
        const int sizes[] = {1, 1, 2, 2, 4};
        std::string uid = "t" + std::to_string(t) + "-" + std::to_string(i);
        cluster::PodRequest pod = Request(uid, sizes[rng() % 5]);
        const std::string& node = names[rng() % names.size()];
        auto r = pipeline.ReserveBest(pod, node);
        if (r.ok()) {
          granted.fetch_add(1);
          // A retried bind gets the same GPUs.
          auto again = pipeline.ReserveBest(pod, node);
          if (!again.ok() || *again != *r) violations.fetch_add(1);
          switch (rng() % 4) {
            case 0:  // The bind failed.
              (void)pipeline.Release(uid);
              break;
            case 1:  // Bound, then the watch reports it, then it finishes.
              (void)pipeline.Confirm(uid);
              model.ApplyPod(MakePod(uid, pod.gpus, node, r->ToString()));
              model.DeletePod(uid);
              break;
            default:  // Bound and still running.
              if (!pipeline.Confirm(uid).ok()) violations.fetch_add(1);
              kept[t][uid] = {node, *r};
          }
        }
      }
    });
  }
  for (auto& b : binders) b.join();
  stop.store(true);
  for (auto& r : readers) r.join();

  CHECK(violations.load() == 0);
  CHECK(granted.load() > 0);
  // The model holds exactly the kept grants, with exactly their GPUs.
  std::map<std::string, GpuSet> union_by_node;
  int kept_gpus = 0;
  for (const auto& per_thread : kept) {
    for (const auto& [uid, g] : per_thread) {
      auto pod = model.PodByUid(uid);
      REQUIRE(pod);
      CHECK(pod->node == g.node);
      CHECK(pod->gpus == g.gpus);
      CHECK_FALSE(union_by_node[g.node].Intersects(g.gpus));
      union_by_node[g.node] = union_by_node[g.node] | g.gpus;
      kept_gpus += g.gpus.size();
    }
  }
  cluster::ClusterTotals totals = model.Totals();
  CHECK(totals.held_gpus == kept_gpus);
  CHECK(totals.reserved_gpus == 0);
  CHECK(totals.free_gpus == totals.usable_gpus - kept_gpus);
  for (const auto& n : names) CHECK(model.Node(n)->free == model.Node(n)->usable - union_by_node[n]);
  // The free GPUs by model, kept by counters the racing binds updated, add up to the same.
  const cluster::FreeGpus by_model = model.Read().FreeByProduct();
  CHECK(by_model.total == totals.free_gpus);
  CHECK(by_model.Of(cluster::GpuProductId("V100")) == totals.free_gpus - model.Node("p0")->free.size());
}

TEST_CASE("concurrency: the same bind racing with itself gets one set") {
  cluster::ClusterModel model;
  Pipeline pipeline(&model);
  model.ApplyNode(MakeNode("n", 8, "hgx-a100-8"));
  std::vector<std::thread> threads;
  std::vector<GpuSet> results(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto r = pipeline.ReserveBest(Request("same", 4), "n");
      if (r.ok()) results[t] = *r;
    });
  }
  for (auto& t : threads) t.join();
  for (const GpuSet& g : results) CHECK(g == results[0]);
  CHECK(model.Node("n")->free.size() == 4);
}

}  // namespace
}  // namespace topofit::placement
