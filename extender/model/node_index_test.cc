#include "extender/model/node_index.h"

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <set>

#include "extender/model/node_state.h"

namespace topofit::model {
namespace {

TEST_CASE("node index: insert - replace - erase with many collisions in a small table") {
  std::vector<std::unique_ptr<NodeState>> nodes;
  NodeIndex index;
  std::set<std::string> live;
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string name = "node-" + std::to_string(rng() % 300);
    if (rng() % 3 == 0) {
      index.Erase(name);
      live.erase(name);
    } else {
      nodes.push_back(std::make_unique<NodeState>(name, ResolvedTopology{}));
      index.Put(nodes.back().get());
      live.insert(name);
      CHECK(index.Find(name) == nodes.back().get());  // The newest replaces the old one.
    }
    if (i % 97 == 0) {
      CHECK(index.size() == live.size());
      for (int j = 0; j < 300; ++j) {
        std::string n = "node-" + std::to_string(j);
        NodeState* found = index.Find(n);
        CHECK((found != nullptr) == (live.count(n) == 1));
        if (found) CHECK(found->name() == n);
      }
    }
  }
  CHECK(index.Find("") == nullptr);
}

}  // namespace
}  // namespace topofit::model
