#include "base/decaying_tally.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace topofit {

TEST_CASE("recent keys: a key counts once while among the last N, again once pushed out, N = 0 remembers none") {
  RecentKeys keys(2);
  CHECK(keys.Insert("a"));
  CHECK_FALSE(keys.Insert("a"));
  CHECK(keys.Insert("b"));
  CHECK(keys.Contains("a"));
  CHECK(keys.Insert("c"));  // Pushes "a" out.
  CHECK_FALSE(keys.Contains("a"));
  CHECK(keys.Insert("a"));
  keys.Clear();
  CHECK(keys.Insert("c"));
  RecentKeys none(0);
  CHECK(none.Insert("x"));
  CHECK(none.Insert("x"));
  CHECK_FALSE(none.Contains("x"));
}

TEST_CASE("decaying unit: an observation half_life ago weighs half the newest, the rescale keeps shares") {
  DecayingUnit unit(4);
  const double first = unit.Weight();
  for (int i = 0; i < 4; ++i) unit.Advance([](double) { FAIL("no rescale expected"); });
  CHECK(unit.Weight() == doctest::Approx(2 * first));
  // Past 1e200 the unit returns to 1 and the stored weights are divided by the same factor.
  DecayingUnit fast(0.001);  // Counts as 1: doubles every step.
  std::vector<double> stored;
  int rescales = 0;
  for (int i = 0; i < 700; ++i) {
    stored.push_back(fast.Weight());
    fast.Advance([&](double factor) {
      ++rescales;
      for (double& w : stored) w /= factor;
    });
  }
  CHECK(rescales >= 1);
  CHECK(fast.Weight() < 1e200);
  CHECK(stored.back() / stored[stored.size() - 2] == doctest::Approx(2.0));
}

TEST_CASE("slot for: the match, else appended below the bound, else the lightest replaced") {
  struct E {
    std::string key;
    double weight;
  };
  std::vector<E> entries;
  auto slot = [&](const std::string& key) {
    return SlotFor(entries, 2, [&](const E& e) { return e.key == key; }, [&] { return E{key, 0}; },
                   [](const E& e) { return e.weight; });
  };
  slot("a")->weight += 3;
  slot("b")->weight += 1;
  slot("a")->weight += 1;
  CHECK(entries.size() == 2);
  CHECK(entries[0].weight == 4);
  auto it = slot("c");  // Replaces "b", the lightest.
  CHECK(it->key == "c");
  CHECK(it->weight == 0);
  CHECK(entries.size() == 2);
  CHECK(entries[0].key == "a");
}

}  // namespace topofit
