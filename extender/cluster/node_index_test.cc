#include "extender/cluster/node_index.h"

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <set>

#include "extender/cluster/node_state.h"

namespace topofit::cluster {
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

TEST_CASE("node index: FindAll answers as Find does, in order, for known and unknown names") {
  std::vector<std::unique_ptr<NodeState>> nodes;
  NodeIndex index;
  std::vector<std::string_view> empty_names = {"a", "b"};
  std::vector<const NodeState*> empty_out(2, reinterpret_cast<const NodeState*>(1));
  index.FindAll(empty_names, empty_out);
  CHECK(empty_out == std::vector<const NodeState*>{nullptr, nullptr});  // Empty index.

  for (int i = 0; i < 500; ++i) {
    nodes.push_back(std::make_unique<NodeState>("gpu-node-" + std::to_string(i), ResolvedTopology{}));
    index.Put(nodes.back().get());
  }
  for (int i = 0; i < 500; i += 7) index.Erase("gpu-node-" + std::to_string(i));
  std::mt19937 rng(11);
  for (size_t n : {0, 1, 5, 8, 9, 16, 17, 1000}) {
    std::vector<std::string> storage;
    for (size_t i = 0; i < n; ++i) storage.push_back("gpu-node-" + std::to_string(rng() % 600));
    std::vector<std::string_view> names(storage.begin(), storage.end());
    std::vector<const NodeState*> out(n);
    index.FindAll(names, out);
    for (size_t i = 0; i < n; ++i) {
      CHECK(out[i] == index.Find(names[i]));
      int k = std::stoi(storage[i].substr(9));
      CHECK((out[i] != nullptr) == (k < 500 && k % 7 != 0));
    }
  }
}

TEST_CASE("node index: the hash sees every byte of names of every length") {
  // Names of length 0..40 and, for each, the name with one byte changed at each position: the
  // hash's overlapping loads must leave no byte out.
  std::set<uint64_t> seen;
  size_t count = 0;
  for (size_t n = 0; n <= 40; ++n) {
    std::string base(n, 'a');
    seen.insert(NodeIndex::Hash(base));
    ++count;
    for (size_t i = 0; i < n; ++i) {
      std::string changed = base;
      changed[i] = 'b';
      seen.insert(NodeIndex::Hash(changed));
      ++count;
    }
  }
  CHECK(seen.size() == count);
  // Low bits (the slot) spread: 5,000 EC2-style names over 16,384 slots fill most of the home slots
  // a uniform hash would (about 4,300).
  std::set<uint64_t> homes;
  for (int i = 0; i < 5000; ++i)
    homes.insert(NodeIndex::Hash("ip-10-" + std::to_string(i / 256) + "-" + std::to_string(i % 256) + ".ec2.internal") & 16383);
  CHECK(homes.size() > 4100);
}

}  // namespace
}  // namespace topofit::cluster
