#include "extender/cluster/pod_group_store.h"

#include "extender/cluster/testing/builders.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace topofit::cluster {
namespace {

k8s::PodGroupObject Gang(std::string ns, std::string name, int32_t min,
                        k8s::PodGroupObject::Api api = k8s::PodGroupObject::Api::kWorkload) {
  return testing::MakePodGroup(api, ns, name, min);
}

}  // namespace

TEST_CASE("pod group store: put, change, find by API, erase, and the callback only on a change") {
  using Api = k8s::PodGroupObject::Api;
  PodGroupStore store;
  std::vector<std::string> changed;
  store.SetOnChange([&](const k8s::PodGroupObject& g) { changed.push_back(g.key() + ":" + std::to_string(g.min_count)); });
  CHECK(store.Put(Gang("ml", "train", 4)) == PodGroupStore::PutResult::kStored);
  CHECK(store.Put(Gang("ml", "train", 4)) == PodGroupStore::PutResult::kUnchanged);
  CHECK(store.Put(Gang("ml", "train", 6)) == PodGroupStore::PutResult::kStored);
  CHECK(store.Put(Gang("ml", "train", 2, Api::kCoscheduling)) == PodGroupStore::PutResult::kStored);
  CHECK(changed == std::vector<std::string>{"ml/train:4", "ml/train:6", "ml/train:2"});
  REQUIRE(store.Find(Api::kWorkload, "ml", "train"));
  CHECK(store.Find(Api::kWorkload, "ml", "train")->min_count == 6);
  CHECK(store.Find(Api::kCoscheduling, "ml", "train")->min_count == 2);  // Same name, other API: another object.
  CHECK_FALSE(store.Find(Api::kWorkload, "other", "train"));
  store.Erase(Api::kWorkload, "ml", "train");
  store.Erase(Api::kWorkload, "ml", "never-put");
  CHECK_FALSE(store.Find(Api::kWorkload, "ml", "train"));
  CHECK(store.size() == 1);
}

TEST_CASE("pod group store: bounded - past the capacity a new PodGroup is refused, known ones still change") {
  PodGroupStore store(2);
  CHECK(store.Put(Gang("a", "1", 1)) == PodGroupStore::PutResult::kStored);
  CHECK(store.Put(Gang("a", "2", 1)) == PodGroupStore::PutResult::kStored);
  CHECK(store.Put(Gang("a", "3", 1)) == PodGroupStore::PutResult::kFull);
  CHECK(store.Put(Gang("a", "2", 5)) == PodGroupStore::PutResult::kStored);
  CHECK_FALSE(store.Find(k8s::PodGroupObject::Api::kWorkload, "a", "3"));
  CHECK(store.size() == 2);
}

TEST_CASE("pod group store: concurrent writers and readers") {
  PodGroupStore store;
  std::atomic<bool> stop{false};
  std::atomic<int> found{0};
  std::thread reader([&] {
    while (!stop.load()) {
      if (auto g = store.Find(k8s::PodGroupObject::Api::kWorkload, "ns", "g7")) {
        CHECK(g->name == "g7");
        found.fetch_add(1);
      }
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&store, t] {
      for (int i = 0; i < 2000; ++i) {
        store.Put(Gang("ns", "g" + std::to_string(i % 10), 1 + (i + t) % 4));
        if (i % 7 == 0) store.Erase(k8s::PodGroupObject::Api::kWorkload, "ns", "g" + std::to_string(i % 10));
      }
    });
  }
  for (auto& w : writers) w.join();
  store.Put(Gang("ns", "g7", 3));
  while (found.load() == 0) std::this_thread::yield();
  stop = true;
  reader.join();
  CHECK(store.size() <= 10);
}

}  // namespace topofit::cluster
