// DomainLoss under concurrency: prioritizes of pods of no group reading the shared PreScore while
// binds change GPUs, nodes are relabelled (the domain map rebuilt), deleted and added again, and
// groups are observed. Also in tsan_tests (test/tsan/), where ThreadSanitizer checks the sharing.
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "extender/groups/domain_loss.h"
#include "extender/groups/testing/small_clusters.h"
#include "extender/placement/pipeline.h"

namespace topofit::groups {
namespace {

TEST_CASE("domain loss: concurrent prioritizes, binds, relabels and group shapes never break a score") {
  cluster::ClusterModel model;
  testing::AddNodes(model, testing::Blocks(4, 8), "hgx-h100-8", 8);
  placement::Pipeline pipeline(&model);
  GroupLookup lookup(testing::SmallLevels());
  GroupShapeEstimate expected;
  DomainMapCache maps(model, testing::SmallLevels());
  DomainLoss loss(maps, lookup, expected);
  pipeline.SetBandLoss(&loss);
  const std::vector<std::string> names = model.NodeNames();
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, calls{0};

  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      const cluster::PodRequest pod = cluster::testing::Request("single-" + std::to_string(r), 1 + r);
      while (!stop) {
        int best = 0;
        for (const placement::NodeScore& s : pipeline.Prioritize(pod, std::span<const std::string>(names))) {
          if (s.score < 0 || s.score > 10) bad++;
          best = std::max(best, s.score);
        }
        if (best != 10) bad++;  // Some node always has a free GPU here.
        calls++;
      }
    });
  }
  threads.emplace_back([&] {  // Binds and deletes: the GPU generation moves.
    std::mt19937 rng(1);
    for (int i = 0; !stop; ++i) {
      const std::string node = names[rng() % names.size()];
      model.ApplyPod(cluster::testing::MakePod("churn-" + std::to_string(i % 8), 2, node, "0,1"));
      model.DeletePod("churn-" + std::to_string((i + 4) % 8));
    }
  });
  threads.emplace_back([&] {  // Relabels (the map rebuilt), a node deleted and back, and new group shapes.
    for (int i = 0; !stop; ++i) {
      model.ApplyNode(cluster::testing::MakeNode(
          "b1-n1", 8, "hgx-h100-8", {{"spine", "s1"}, {"block", i % 2 ? "b1" : "b9"}, {"host", "b1-n1"}}));
      if (i % 2) {  // Its NodeState freed while the losses may hold the last PreScore read with it.
        model.DeleteNode("b2-n2");
      } else {
        model.ApplyNode(cluster::testing::MakeNode("b2-n2", 8, "hgx-h100-8",
                                                   {{"spine", "s1"}, {"block", "b2"}, {"host", "b2-n2"}}));
      }
      GroupSpec spec;
      spec.name = "g" + std::to_string(i);
      spec.size = spec.min_count = 1 + i % 6;
      spec.gpus = 8;
      spec.level = 1;
      expected.Observe(spec);
      std::this_thread::yield();
    }
  });
  while (!expected.any()) std::this_thread::yield();
  const int from = calls;
  while (calls < from + 2000) std::this_thread::yield();
  stop = true;
  for (auto& t : threads) t.join();
  CHECK(bad == 0);
}

}  // namespace
}  // namespace topofit::groups
