// FragmentationCycle's flat table of terms (score_plugins.h) against a std::map of the same keys: every
// key added once is found with its own terms, a key added again is not new, a key never added is not
// found, and the float parts of every state stay its own - across growth past what was reserved and
// with keys whose hashes collide.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <tuple>

#include "extender/placement/score_plugins.h"

namespace topofit::placement {
namespace {

using Key = FragmentationCycle::Key;

auto Tuple(const Key& k) { return std::make_tuple(k.topology, k.free, k.product); }

// Fills `fc` with `count` random keys (drawn from a small space, so that many repeat and many hashes
// collide), writing each new state's parts; checks each Add against `seen`.
void AddRandom(FragmentationCycle& fc, int count, uint32_t seed, std::map<std::tuple<const Topology*, uint64_t, uint32_t>, int>& seen) {
  std::mt19937 rng(seed);
  const size_t groups = fc.groups.size();
  for (int i = 0; i < count; ++i) {
    const Key key{reinterpret_cast<const Topology*>(uintptr_t(16 * (1 + rng() % 5))), rng() % 64, uint32_t(rng() % 3)};
    auto [terms, added] = fc.Add(key);
    REQUIRE(terms != nullptr);
    const auto [it, fresh] = seen.try_emplace(Tuple(key), static_cast<int>(seen.size()));
    CHECK(added == fresh);
    if (!added) continue;
    CHECK(terms->free_before == 0);  // A new state's terms are zeroed.
    CHECK(terms->allowed == 0);
    terms->free_before = it->second;
    terms->at = static_cast<uint32_t>(fc.values.size());
    fc.values.resize(fc.values.size() + 4 * groups);
    for (auto part : {FragmentationCycle::kNBefore, FragmentationCycle::kQBefore, FragmentationCycle::kNAfter,
                      FragmentationCycle::kQAfter})
      for (size_t g = 0; g < groups; ++g) fc.Of(*terms, part)[g] = float(it->second * 10 + part) + float(g) / 8;
  }
}

TEST_CASE("FragmentationCycle: every state added is found with its own terms, nothing else is found") {
  for (size_t reserved : {size_t{0}, size_t{3}, size_t{1000}}) {
    FragmentationCycle fc;
    fc.groups = {{1, {}}, {2, {}}, {4, {}}};
    fc.Reserve(reserved);
    std::map<std::tuple<const Topology*, uint64_t, uint32_t>, int> seen;
    AddRandom(fc, 3000, 7 + uint32_t(reserved), seen);
    CHECK(seen.size() > 500);  // Grown well past 3 reserved, and many repeats.
    for (const auto& [tuple, id] : seen) {
      const Key key{std::get<0>(tuple), std::get<1>(tuple), std::get<2>(tuple)};
      const FragmentationCycle::Terms* t = fc.Find(key);
      REQUIRE(t != nullptr);
      CHECK(t->free_before == id);
      for (size_t g = 0; g < fc.groups.size(); ++g) {
        CHECK(fc.Of(*t, FragmentationCycle::kNBefore)[g] == float(id * 10) + float(g) / 8);
        CHECK(fc.Of(*t, FragmentationCycle::kQAfter)[g] == float(id * 10 + 3) + float(g) / 8);
      }
    }
    CHECK(fc.Find(Key{reinterpret_cast<const Topology*>(uintptr_t(16 * 9)), 1, 0}) == nullptr);
    CHECK(fc.Find(Key{reinterpret_cast<const Topology*>(uintptr_t(16)), 1u << 20, 0}) == nullptr);
  }
}

TEST_CASE("FragmentationCycle: an empty table finds nothing") {
  FragmentationCycle fc;
  CHECK(fc.Find(Key{nullptr, 0, 0}) == nullptr);
  fc.Reserve(0);
  CHECK(fc.Find(Key{nullptr, 0, 0}) == nullptr);
}

}  // namespace
}  // namespace topofit::placement
