// FreeChangeLog alone (what it keeps, what it refuses), under concurrent writers, and as the model
// fills it: every change of a node's free GPUs under that node's slot (NodeState::slot).
#include "extender/cluster/free_change_log.h"

#include <algorithm>
#include <set>
#include <thread>

#include <doctest/doctest.h>

#include "extender/cluster/cluster_model.h"
#include "extender/cluster/testing/builders.h"

namespace topofit::cluster {
namespace {

using testing::MakeNode;
using testing::MakePod;

TEST_CASE("free change log: the slots since a generation, in order, while they are kept") {
  FreeChangeLog log;
  std::vector<uint32_t> out;
  CHECK(log.ChangedSince(0, 0, &out));  // Nothing to tell.
  CHECK(out.empty());
  CHECK(log.Record(7) == 1);
  CHECK(log.Record(3) == 2);
  CHECK(log.Record(7) == 3);
  CHECK(log.generation() == 3);
  CHECK(log.ChangedSince(0, 3, &out));
  CHECK(out == std::vector<uint32_t>{7, 3, 7});
  out.clear();
  CHECK(log.ChangedSince(1, 3, &out));
  CHECK(out == std::vector<uint32_t>{3, 7});
  out.clear();
  CHECK(log.ChangedSince(3, 3, &out));
  CHECK(log.ChangedSince(5, 3, &out));  // from >= to: nothing, not an error.
  CHECK(out.empty());
  CHECK_FALSE(log.ChangedSince(3, 4, &out));  // Generation 4 is not recorded yet.
}

TEST_CASE("free change log: once more changes came than it keeps, the old generations are refused") {
  FreeChangeLog log;
  for (uint32_t i = 0; i < FreeChangeLog::kKept + 5; ++i) log.Record(i);
  const uint64_t now = log.generation();
  std::vector<uint32_t> out;
  CHECK_FALSE(log.ChangedSince(0, now, &out));
  CHECK_FALSE(log.ChangedSince(4, now, &out));  // Generation 5 was overwritten by kKept + 5.
  out.clear();
  CHECK(log.ChangedSince(now - FreeChangeLog::kKept, now, &out));
  REQUIRE(out.size() == FreeChangeLog::kKept);
  CHECK(out.front() == 5);
  CHECK(out.back() == FreeChangeLog::kKept + 4);
}

TEST_CASE("free change log: concurrent writers, and a reader gets every slot written or is refused") {
  FreeChangeLog log;
  constexpr uint32_t kWriters = 3, kEach = 20000;
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0}, answered{0};
  std::thread reader([&] {
    uint64_t from = 0;
    while (!done) {
      const uint64_t to = log.generation();
      std::vector<uint32_t> out;
      if (log.ChangedSince(from, to, &out)) {
        answered++;
        if (out.size() != to - from) wrong++;
        for (uint32_t s : out)
          if (s % 1000 >= kWriters) wrong++;  // Writer w records slots w, 1000 + w, ...
      }
      from = to;
    }
  });
  std::vector<std::thread> writers;
  for (uint32_t w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      for (uint32_t i = 0; i < kEach; ++i) log.Record(1000 * (i % 50) + w);
    });
  for (auto& t : writers) t.join();
  done = true;
  reader.join();
  CHECK(log.generation() == kWriters * kEach);
  CHECK(wrong == 0);
  CHECK(answered > 0);
}

TEST_CASE("model: slots are unique among its nodes, kept by a node re-resolved, given again after a delete") {
  ClusterModel model;
  for (const char* n : {"a", "b", "c"}) model.ApplyNode(MakeNode(n, 8, "hgx-h100-8"));
  auto slot = [&](const char* n) { return model.Read().Find(n)->slot(); };
  const std::set<uint32_t> first{slot("a"), slot("b"), slot("c")};
  CHECK(first == std::set<uint32_t>{0, 1, 2});
  CHECK(model.Read().slot_bound() == 3);
  const uint32_t b = slot("b");
  const NodeState* before = model.Read().Find("b");
  model.ApplyNode(MakeNode("b", 4, "hgx-h100-8"));  // A new topology: a new NodeState.
  CHECK(model.Read().Find("b") != before);
  CHECK(slot("b") == b);
  const uint32_t a = slot("a");
  model.DeleteNode("a");
  model.ApplyNode(MakeNode("d", 8, "hgx-h100-8"));
  CHECK(slot("d") == a);  // The deleted node's slot, not a fourth.
  CHECK(model.Read().slot_bound() == 3);
  model.ApplyNode(MakeNode("e", 8, "hgx-h100-8"));
  CHECK(slot("e") == 3);
  CHECK(model.Read().slot_bound() == 4);
}

TEST_CASE("model: each change of a node's free GPUs is logged under its slot, nothing else") {
  ClusterModel model;
  for (const char* n : {"a", "b"}) model.ApplyNode(MakeNode(n, 8, "hgx-h100-8"));
  const uint32_t a = model.Read().Find("a")->slot(), b = model.Read().Find("b")->slot();
  const uint64_t start = model.gpu_generation();
  model.ApplyPod(MakePod("p1", 2, "a", "0,1"));
  model.ApplyPod(MakePod("p2", 1, "b", "3"));
  model.ApplyPod(MakePod("p1", 2, "a", "0,1"));  // The same again: no change, nothing logged.
  model.DeletePod("p1");
  std::vector<uint32_t> out;
  REQUIRE(model.free_changes().ChangedSince(start, model.gpu_generation(), &out));
  CHECK(out == std::vector<uint32_t>{a, b, a});
}

}  // namespace
}  // namespace topofit::cluster
