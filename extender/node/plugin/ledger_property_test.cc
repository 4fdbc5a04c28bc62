// The property test (docs/kubelet-contracts.md §6): random nodes, plans, foreign pods, unhealthy GPUs,
// completions and admission orders, with kubelet's per-container algorithm (testing/kubelet_model.h,
// random fill) asking the matcher and the ledger recording each Allocate. Checked on every seed:
//   - every reply is valid (within available + must_include, must_include first, no repeats, full size);
//   - no admission fails because of topofit: only kubelet's own capacity check fails one;
//   - a container whose planned set kubelet offers whole gets exactly that set (counted: 100%);
//   - no GPU is held by two pods, in kubelet's books or in the ledger;
//   - every holder the ledger names is kubelet's holder, with kubelet's devices; every device kubelet
//     holds is in the ledger; after a reconcile the ledger is kubelet's truth.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "extender/node/plugin/ledger.h"
#include "extender/node/plugin/matcher.h"
#include "extender/node/plugin/testing/kubelet_model.h"
#include "extender/node/plugin/testing/pod_json.h"

namespace topofit::node {
namespace {

using testing::KubeletModel;
using testing::TestContainer;
using testing::TestPod;

constexpr const char* kNode = "n1";

struct Tally {
  int offered_whole = 0;  // Containers whose plan kubelet offered whole.
  int got_plan = 0;       // ... and that got exactly it.
  int containers = 0;
  int foreign = 0;
  int tentative = 0;
};

std::string Join(const DeviceList& d) {
  std::string out;
  for (const auto& x : d) out += (out.empty() ? "" : ",") + x;
  return out;
}

std::vector<LedgerEntry> Truth(const KubeletModel& kubelet) {
  std::vector<LedgerEntry> truth;
  for (const auto& [key, devices] : kubelet.holdings()) truth.push_back({key.first, key.second, devices, 0, true});
  return truth;
}

void CheckLedgerAgainstTruth(const Ledger& ledger, const KubeletModel& kubelet) {
  std::map<std::string, std::string> device_pod;
  for (const auto& [key, devices] : kubelet.holdings()) {
    for (const auto& d : devices) {
      auto [it, fresh] = device_pod.emplace(d, key.first);
      CHECK_MESSAGE((fresh || it->second == key.first), "kubelet gave " << d << " to two pods");
    }
  }
  std::map<std::string, std::string> ledger_pod;
  for (const auto& e : ledger.entries()) {
    if (e.pod_uid.empty()) continue;
    for (const auto& d : e.devices) {
      auto [it, fresh] = ledger_pod.emplace(d, e.pod_uid);
      CHECK_MESSAGE((fresh || it->second == e.pod_uid), "the ledger has " << d << " under two pods");
    }
    auto truth = kubelet.holdings().find({e.pod_uid, e.container});
    if (truth != kubelet.holdings().end()) {
      CHECK_MESSAGE(truth->second == e.devices, "ledger holder " << e.pod_uid << "/" << e.container << " has " << Join(e.devices)
                                                 << ", kubelet gave " << Join(truth->second));
    }
  }
  std::set<std::string> held = ledger.HeldDevices();
  for (const auto& [d, pod] : device_pod) CHECK_MESSAGE(held.count(d), "kubelet's " << d << " is not in the ledger");
}

void RunSeed(uint64_t seed, Tally& tally) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int gpu_count = pick(0, 1) ? 8 : 16;
  std::vector<int> order(gpu_count);
  for (int i = 0; i < gpu_count; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  size_t next_free = 0;
  auto take = [&](int n) {
    DeviceList out;
    for (int i = 0; i < n; ++i) out.push_back(testing::Gpus({order[next_free++]})[0]);
    return out;
  };

  // The extender's side: pods with disjoint plans while GPUs last, some foreign pods.
  std::vector<NodePod> pods;
  const int pod_count = pick(3, 14);
  const int sizes[] = {1, 2, 2, 4, 1, 8};
  for (int i = 0; i < pod_count; ++i) {
    TestPod p;
    p.name = "p" + std::to_string(i);
    p.uid = "uid-" + std::to_string(seed) + "-" + std::to_string(i);
    // Equal creation times are common (one controller's burst).
    p.created = "2026-11-23T00:00:0" + std::to_string(pick(0, 3)) + "Z";
    p.plan_time = pick(0, 5);
    const int shape = pick(0, 9);
    int a = sizes[pick(0, gpu_count == 8 ? 4 : 5)];
    bool foreign = pick(0, 6) == 0;
    if (shape < 6) {
      p.containers = {{"main", a}};
    } else if (shape < 8) {
      p.containers = {{"main", a}, {"aux", sizes[pick(0, 2)]}};
    } else {
      p.containers = {{"init", std::max(1, a / 2), {}, true}, {"main", a}};
    }
    int long_lived = 0;
    for (const auto& c : p.containers) long_lived += c.init ? 0 : c.gpus;
    if (!foreign && next_free + long_lived <= order.size()) {
      // Long-lived containers get consecutive disjoint runs; a regular init container the head of the next run.
      size_t start = next_free;
      for (auto& c : p.containers) {
        if (!c.init) c.plan = take(c.gpus);
      }
      for (auto& c : p.containers) {
        if (c.init) {
          for (int k = 0; k < c.gpus; ++k) c.plan.push_back(testing::Gpus({order[start + k]})[0]);
        }
      }
    } else {
      p.plan_node = "";
      ++tally.foreign;
    }
    pods.push_back(testing::Decoded(p));
  }

  KubeletModel kubelet(seed * 7919 + 1);
  std::map<std::string, bool> health;
  for (int i = 0; i < gpu_count; ++i) health[testing::Gpus({i})[0]] = true;
  // A GPU may go unhealthy after the plans were made.
  if (pick(0, 3) == 0) health[testing::Gpus({pick(0, gpu_count - 1)})[0]] = false;
  kubelet.SetDevices(health);

  Ledger ledger;
  std::vector<size_t> admission(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) admission[i] = i;
  std::shuffle(admission.begin(), admission.end(), rng);
  std::vector<size_t> admitted;

  for (size_t idx : admission) {
    NodePod& pod = pods[idx];
    std::optional<Decision> last;
    std::optional<Holder> previous;
    std::map<std::string, bool> whole;  // container -> its plan was offered whole
    auto preferred = [&](const PreferredRequest& req) -> std::optional<DeviceList> {
      MatchResult m = Match(
          req, kNode, pods, ledger, OneByOne([&](const NodePod& p, const std::string& c) { return kubelet.View(p, c); }),
          [&](const PreferredRequest& b) -> std::optional<DeviceList> {
            DeviceList offer = b.available;
            std::shuffle(offer.begin(), offer.end(), rng);  // Any backend policy.
            return offer;
          });
      last = m.decision;
      if (m.decision.tentative) ++tally.tentative;
      // The reply is valid.
      std::set<std::string> allowed(req.available.begin(), req.available.end());
      allowed.insert(req.must_include.begin(), req.must_include.end());
      std::set<std::string> seen;
      for (const auto& d : m.reply) {
        CHECK(allowed.count(d));
        CHECK(seen.insert(d).second);
      }
      CHECK(m.reply.size() == std::min<size_t>(req.size, allowed.size()));
      for (size_t i = 0; i < req.must_include.size() && i < m.reply.size(); ++i) CHECK(m.reply[i] == req.must_include[i]);
      return m.reply;
    };
    // Which of the pod's containers kubelet is about to serve: record "offered whole" at the call.
    auto preferred_for = [&](const PreferredRequest& req) {
      for (const auto& c : pod.containers) {
        if (kubelet.holdings().count({pod.uid, c.name})) continue;
        const GpuAssignment* plan = UsablePlan(pod, kNode);
        const DeviceList* s = plan ? plan->Find(c.name) : nullptr;
        if (s) {
          std::set<std::string> allowed(req.available.begin(), req.available.end());
          bool ok = std::all_of(s->begin(), s->end(), [&](const std::string& d) { return allowed.count(d); }) &&
                    std::all_of(req.must_include.begin(), req.must_include.end(),
                                [&](const std::string& m) { return std::find(s->begin(), s->end(), m) != s->end(); });
          whole[c.name] = ok;
        }
        break;
      }
      return preferred(req);
    };
    auto allocate = [&](const DeviceList& devices) {
      Holder h = IdentifyAllocation(devices, kNode, pods, ledger, last, previous);
      previous = h;
      ledger.Record(h.pod_uid, h.container, devices);
      last.reset();
      return true;
    };
    Status st = kubelet.Admit(pod, preferred_for, allocate);
    if (!st.ok()) {
      // Only kubelet's own capacity check may fail an admission.
      CHECK_MESSAGE(st.error().find("unavailable") != std::string::npos, st.error());
      kubelet.Remove(pod.uid);
      pod.phase = "Failed";
    } else {
      admitted.push_back(idx);
    }
    for (const auto& c : pod.containers) {
      ++tally.containers;
      auto w = whole.find(c.name);
      if (w == whole.end() || !w->second || !st.ok()) continue;
      ++tally.offered_whole;
      DeviceList plan = *pod.plan->Find(c.name);
      std::sort(plan.begin(), plan.end());
      auto got = kubelet.holdings().find({pod.uid, c.name});
      REQUIRE(got != kubelet.holdings().end());
      CHECK_MESSAGE(got->second == plan, "seed " << seed << " " << pod.name << "/" << c.name << " missed its plan");
      if (got->second == plan) ++tally.got_plan;
    }
    CheckLedgerAgainstTruth(ledger, kubelet);
    // Completions, and the reconciler now and then.
    if (!admitted.empty() && pick(0, 4) == 0) {
      size_t done = admitted[pick(0, static_cast<int>(admitted.size()) - 1)];
      pods[done].phase = "Succeeded";
      kubelet.Remove(pods[done].uid);
      std::erase(admitted, done);
      std::set<std::string> live;
      for (const auto& p : pods) {
        if (!p.terminal()) live.insert(p.uid);
      }
      ledger.Retain(live);
    }
    if (pick(0, 3) == 0) ledger.ReplaceWithTruth(Truth(kubelet), ledger.seq());
    CheckLedgerAgainstTruth(ledger, kubelet);
  }
  ledger.ReplaceWithTruth(Truth(kubelet), ledger.seq());
  std::vector<LedgerEntry> truth = Truth(kubelet);
  for (auto& e : truth) std::sort(e.devices.begin(), e.devices.end());
  auto entries = ledger.entries();
  auto by_key = [](const LedgerEntry& a, const LedgerEntry& b) {
    return std::tie(a.pod_uid, a.container) < std::tie(b.pod_uid, b.container);
  };
  std::sort(entries.begin(), entries.end(), by_key);
  std::sort(truth.begin(), truth.end(), by_key);
  CHECK(entries == truth);
}

}  // namespace

TEST_CASE("property: random admission orders never double-book, follow every whole plan, and end at kubelet's truth") {
  Tally tally;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    CAPTURE(seed);
    RunSeed(seed, tally);
  }
  MESSAGE("containers " << tally.containers << ", plan offered whole " << tally.offered_whole << ", got it "
                        << tally.got_plan << ", foreign pods " << tally.foreign << ", tentative " << tally.tentative);
  CHECK(tally.offered_whole > 1000);
  CHECK(tally.got_plan == tally.offered_whole);
}

TEST_CASE("ledger: Record replaces a container's entry and takes devices from stale holders") {
  Ledger l;
  l.Record("u1", "c", {"G2", "G1"});
  CHECK(l.Allocated("u1", "c"));
  CHECK(l.entries()[0].devices == DeviceList{"G1", "G2"});
  l.Record("", "", {"G2"});  // Kubelet gave G2 to a foreign pod: u1 no longer has it.
  CHECK(l.entries()[0].devices == DeviceList{"G1"});
  l.Record("u1", "c", {"G3"});
  CHECK(l.entries().size() == 2);
  CHECK(l.HeldDevices() == std::set<std::string>{"G2", "G3"});
}

TEST_CASE("ledger: truth replaces what was recorded before the List, keeps what came after") {
  Ledger l;
  l.Record("u1", "c", {"G1"});
  l.Record("", "", {"G2"});
  uint64_t sent = l.seq();
  l.Record("u3", "c", {"G3"});  // Allocated while the List was in flight.
  l.ReplaceWithTruth({{"u1", "c", {"G1"}}, {"u2", "c", {"G2"}}}, sent);
  REQUIRE(l.entries().size() == 3);
  CHECK(l.entries()[1].pod_uid == "u2");
  CHECK(l.entries()[1].confirmed);
  CHECK(l.entries()[2].pod_uid == "u3");
  CHECK_FALSE(l.entries()[2].confirmed);
  l.Retain({"u2"});
  CHECK(l.entries().size() == 1);
}

}  // namespace topofit::node
