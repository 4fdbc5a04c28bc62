#pragma once
// PlacementFixture: the setup the placement tests share - a ClusterModel holding the given nodes
// (name, GPUs, topology profile or "" for none: cluster/testing/builders.h's MakeNode) and a Pipeline
// over it, with the default config unless one is given. The builders the tests use with it are here
// by their short names (`using namespace testing;` in a test). Nothing is an error here: a node the
// model cannot resolve is applied as the model applies it. Test-only; one per test case, used from
// the test's thread (the Pipeline itself is thread-safe, as in production).

#include <string>
#include <vector>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement::testing {

using cluster::testing::AddNode;
using cluster::testing::kGiB;
using cluster::testing::MakeNode;
using cluster::testing::MakePod;
using cluster::testing::Request;
using cluster::testing::Required;

struct TestNode {
  std::string name;
  int gpus = 0;
  std::string profile;
};

struct PlacementFixture {
  explicit PlacementFixture(const std::vector<TestNode>& nodes = {}, PipelineConfig config = {})
      : pipeline(&model, std::move(config)) {
    for (const TestNode& n : nodes) model.ApplyNode(MakeNode(n.name, n.gpus, n.profile));
  }
  PlacementFixture(const PlacementFixture&) = delete;
  PlacementFixture& operator=(const PlacementFixture&) = delete;

  cluster::ClusterModel model;
  Pipeline pipeline;
};

}  // namespace topofit::placement::testing
