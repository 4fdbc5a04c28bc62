#include "extender/node/plugin/reconciler.h"

#include <algorithm>
#include <set>

#include "extender/node/plugin/matcher.h"

namespace topofit::node {
namespace {

DeviceList Sorted(DeviceList d) {
  std::sort(d.begin(), d.end());
  return d;
}

std::set<std::string> KeysOf(const std::vector<PodDevices>& list) {
  std::set<std::string> keys;
  for (const auto& pd : list) keys.insert(pd.namespace_ + "/" + pd.name);
  return keys;
}

}  // namespace

std::map<std::string, const NodePod*> PodsByKey(const std::vector<NodePod>& pods) {
  std::map<std::string, const NodePod*> by_key;
  for (const auto& p : pods) {
    auto [it, fresh] = by_key.emplace(p.key(), &p);
    if (!fresh && it->second->deleting && !p.deleting) it->second = &p;
  }
  return by_key;
}

std::vector<PodDevices> WithInitHoldings(const std::vector<NodePod>& pods, const Ledger& ledger,
                                         std::vector<PodDevices> list) {
  const auto by_key = PodsByKey(pods);
  auto recorded = [&](const NodePod& pod, const std::string& container) -> const DeviceList* {
    for (const auto& e : ledger.entries()) {
      if (e.pod_uid == pod.uid && e.container == container) return &e.devices;
    }
    return pod.actual ? pod.actual->Find(container) : nullptr;
  };
  for (auto& pd : list) {
    auto it = by_key.find(pd.namespace_ + "/" + pd.name);
    if (it == by_key.end()) continue;
    std::vector<std::pair<std::string, DeviceList>> ordered;
    for (const auto& c : it->second->containers) {
      auto listed = std::find_if(pd.containers.begin(), pd.containers.end(), [&](const auto& x) { return x.first == c.name; });
      const DeviceList* held = c.init && !c.restartable ? recorded(*it->second, c.name) : nullptr;
      if (listed != pd.containers.end()) {
        ordered.push_back(std::move(*listed));
        pd.containers.erase(listed);
      } else if (held && !held->empty()) {
        ordered.emplace_back(c.name, *held);
      }
    }
    for (auto& rest : pd.containers) ordered.push_back(std::move(rest));
    pd.containers = std::move(ordered);
  }
  return list;
}

std::vector<ActualReport> ComputeActuals(std::string_view node, const std::vector<NodePod>& pods,
                                         const std::vector<PodDevices>& truth, int64_t unix_seconds) {
  const auto by_key = PodsByKey(pods);
  std::vector<ActualReport> out;
  for (const auto& pd : truth) {
    if (pd.containers.empty()) continue;
    auto it = by_key.find(pd.namespace_ + "/" + pd.name);
    if (it == by_key.end()) continue;
    ActualReport r;
    r.pod = it->second;
    r.actual.node = std::string(node);
    r.actual.unix_seconds = unix_seconds;
    for (const auto& [container, devices] : pd.containers) r.actual.containers.emplace_back(container, Sorted(devices));
    if (const GpuAssignment* plan = UsablePlan(*r.pod, node)) {
      for (const auto& [container, planned] : plan->containers) {
        const DeviceList* held = r.actual.Find(container);
        if (!held) continue;  // Not admitted yet (or no longer running): nothing to compare.
        if (!HoldsAsPlanned(*r.pod, *plan, container, *held)) {
          r.mismatch = true;
          r.detail += (r.detail.empty() ? "" : "; ") + container + ": planned " + JoinDevices(Sorted(planned)) + ", holds " +
                      JoinDevices(*held);
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool NeedsPublish(const ActualReport& report) {
  if (!report.pod->actual) return true;
  const GpuAssignment& old = *report.pod->actual;
  if (old.node != report.actual.node || old.containers.size() != report.actual.containers.size()) return true;
  for (const auto& [container, devices] : report.actual.containers) {
    const DeviceList* was = old.Find(container);
    if (!was || Sorted(*was) != devices) return true;
  }
  return false;
}

std::vector<const NodePod*> PodsToAsk(std::string_view node, const std::vector<NodePod>& pods, const Ledger& ledger,
                                      const std::vector<PodDevices>& listed,
                                      const std::map<std::string, uint64_t>& last_asked, size_t max) {
  const std::set<std::string> keys = KeysOf(listed);
  std::vector<const NodePod*> out;
  for (const auto& pod : pods) {
    if (!UsablePlan(pod, node) || ledger.Ended(pod.uid) || keys.count(pod.key()) || !NextContainer(pod, ledger)) continue;
    out.push_back(&pod);
  }
  auto asked = [&](const NodePod* p) {
    auto it = last_asked.find(p->uid);
    return it == last_asked.end() ? 0 : it->second + 1;
  };
  std::stable_sort(out.begin(), out.end(), [&](const NodePod* a, const NodePod* b) {
    return std::make_pair(asked(a), a->creation_timestamp) < std::make_pair(asked(b), b->creation_timestamp);
  });
  if (out.size() > max) out.resize(max);
  return out;
}

std::vector<std::string> EndedPods(const std::vector<const NodePod*>& asked, const std::vector<KubeletView>& views,
                                   const std::vector<PodDevices>& later) {
  const std::set<std::string> keys = KeysOf(later);
  std::vector<std::string> out;
  for (size_t i = 0; i < asked.size() && i < views.size(); ++i) {
    const bool known = views[i] == KubeletView::kAdmitting || views[i] == KubeletView::kHasDevices;
    if (known && !keys.count(asked[i]->key())) out.push_back(asked[i]->uid);
  }
  return out;
}

std::string EncodeGpuHealth(const std::vector<std::string>& unhealthy, int64_t unix_seconds) {
  return k8s::EncodeGpuHealth({Sorted(unhealthy), unix_seconds});
}

}  // namespace topofit::node
