#include "extender/node/plugin/matcher.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace topofit::node {
namespace {

DeviceList Sorted(DeviceList d) {
  std::sort(d.begin(), d.end());
  return d;
}

bool Contains(const DeviceList& list, const std::string& id) {
  return std::find(list.begin(), list.end(), id) != list.end();
}

auto OrderKey(const Candidate& c) {
  return std::tie(c.pod->creation_timestamp, c.pod->plan->unix_seconds, c.pod->namespace_, c.pod->name);
}

const Candidate& Earliest(const std::vector<Candidate>& candidates) {
  return *std::min_element(candidates.begin(), candidates.end(),
                           [](const Candidate& a, const Candidate& b) { return OrderKey(a) < OrderKey(b); });
}

// A less the GPUs planned for pending containers of pods other than `except_uid`, plus `keep`; A
// itself when that leaves fewer than k.
DeviceList Offer(const PreferredRequest& request, const DeviceList& keep, const std::vector<NodePod>& pods,
                 const Ledger& ledger, std::string_view node, std::string_view except_uid) {
  std::set<std::string> reserved;
  for (const auto& pod : pods) {
    if (pod.uid == except_uid || ledger.Ended(pod.uid)) continue;
    const GpuAssignment* plan = UsablePlan(pod, node);
    if (!plan) continue;
    for (const auto& c : pod.containers) {
      if (ledger.Allocated(pod.uid, c.name)) continue;
      if (const DeviceList* s = plan->Find(c.name)) reserved.insert(s->begin(), s->end());
    }
  }
  DeviceList offer;
  for (const auto& id : request.available) {
    if (!reserved.count(id) || Contains(keep, id) || Contains(request.must_include, id)) offer.push_back(id);
  }
  for (const auto& id : request.must_include) {
    if (!Contains(offer, id)) offer.push_back(id);
  }
  if (static_cast<int>(offer.size()) >= request.size) return offer;
  DeviceList all = request.available;
  for (const auto& id : request.must_include) {
    if (!Contains(all, id)) all.push_back(id);
  }
  return all;
}

// The decision follows the earliest of `among` (tentative when others match too): it names that pod
// and container and answers the request's must-include devices, then the planned ones `keep` allows.
template <typename Keep>
void FollowEarliest(Decision& d, Decision::Kind kind, const std::vector<Candidate>& among,
                    const PreferredRequest& request, Keep keep) {
  const Candidate& c = Earliest(among);
  d.kind = kind;
  d.pod_uid = c.pod->uid;
  d.pod_key = c.pod->key();
  d.container = c.container;
  d.tentative = among.size() > 1;
  for (const auto& m : request.must_include) d.answer.push_back(m);
  for (const auto& id : c.planned) {
    if (!Contains(d.answer, id) && keep(id)) d.answer.push_back(id);
  }
}

}  // namespace

// Kubelet admits a pod's containers in that order in one pass, so every container before an
// allocated one was admitted too, even when kubelet's truth leaves it out (PodResources never
// reports regular init containers).
const GpuContainer* NextContainer(const NodePod& pod, const Ledger& ledger) {
  const GpuContainer* next = pod.containers.empty() ? nullptr : &pod.containers.front();
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    if (ledger.Allocated(pod.uid, pod.containers[i].name)) {
      next = i + 1 < pod.containers.size() ? &pod.containers[i + 1] : nullptr;
    }
  }
  return next;
}

const GpuAssignment* UsablePlan(const NodePod& pod, std::string_view node) {
  if (!pod.plan || pod.node_name != node || pod.plan->node != node || pod.terminal() || pod.deleting) return nullptr;
  return &*pod.plan;
}

Candidates FindCandidates(std::string_view node, const std::vector<NodePod>& pods, const Ledger& ledger,
                          const PreferredRequest& request) {
  Candidates out;
  const std::set<std::string> usable(request.available.begin(), request.available.end());
  for (const auto& pod : pods) {
    const GpuAssignment* plan = UsablePlan(pod, node);
    if (!plan || ledger.Ended(pod.uid)) continue;
    const GpuContainer* next = NextContainer(pod, ledger);
    if (!next) continue;
    const DeviceList* s = plan->Find(next->name);
    if (!s || static_cast<int>(s->size()) != request.size) continue;
    if (!std::all_of(request.must_include.begin(), request.must_include.end(),
                     [&](const std::string& m) { return Contains(*s, m); })) {
      continue;
    }
    bool within = std::all_of(s->begin(), s->end(), [&](const std::string& id) {
      return usable.count(id) || Contains(request.must_include, id);
    });
    (within ? out.exact : out.partial).push_back({&pod, next->name, *s});
  }
  return out;
}

std::vector<Candidate> Narrow(std::vector<Candidate> candidates, const std::vector<KubeletView>& views) {
  std::vector<Candidate> admitting, unknown;
  for (size_t i = 0; i < candidates.size(); ++i) {
    KubeletView v = i < views.size() ? views[i] : KubeletView::kUnknown;
    if (v == KubeletView::kAdmitting) admitting.push_back(candidates[i]);
    if (v == KubeletView::kUnknown) unknown.push_back(candidates[i]);
  }
  return admitting.empty() ? unknown : admitting;
}

Decision Decide(const PreferredRequest& request, const std::vector<Candidate>& exact,
                const std::vector<Candidate>& partial, const std::vector<NodePod>& pods, const Ledger& ledger,
                std::string_view node) {
  Decision d;
  d.size = request.size;
  if (!exact.empty()) {
    FollowEarliest(d, Decision::Kind::kPlanned, exact, request, [](const std::string&) { return true; });
    return d;
  }
  if (!partial.empty()) {
    FollowEarliest(d, Decision::Kind::kPartial, partial, request,
                   [&](const std::string& id) { return Contains(request.available, id); });
    if (static_cast<int>(d.answer.size()) > request.size) d.answer.resize(request.size);
  } else {
    d.answer = request.must_include;
  }
  d.backend.size = request.size;
  d.backend.must_include = d.answer;
  d.backend.available = Offer(request, d.answer, pods, ledger, node, d.pod_uid);
  return d;
}

DeviceList Complete(const PreferredRequest& request, const Decision& decision,
                    const std::optional<DeviceList>& backend_answer) {
  if (decision.kind == Decision::Kind::kPlanned) return decision.answer;
  DeviceList reply;
  const size_t k = request.size > 0 ? static_cast<size_t>(request.size) : 0;
  auto add = [&](const std::string& id) {
    if (reply.size() >= k || Contains(reply, id)) return;
    if (Contains(request.available, id) || Contains(request.must_include, id)) reply.push_back(id);
  };
  for (const auto& id : request.must_include) add(id);
  for (const auto& id : decision.answer) add(id);
  if (backend_answer) {
    for (const auto& id : *backend_answer) add(id);
  }
  for (const auto& id : decision.backend.available) add(id);
  return reply;
}

ViewsFn OneByOne(ViewFn view) {
  return [view = std::move(view)](const std::vector<const Candidate*>& wave) {
    std::vector<KubeletView> out;
    out.reserve(wave.size());
    for (const Candidate* c : wave) out.push_back(view(*c->pod, c->container));
    return out;
  };
}

MatchResult Match(const PreferredRequest& request, std::string_view node, const std::vector<NodePod>& pods,
                  const Ledger& ledger, const ViewsFn& views, const BackendFn& backend) {
  MatchResult out;
  Candidates c = FindCandidates(node, pods, ledger, request);
  out.candidates = static_cast<int>(c.exact.size() + c.partial.size());
  if (views && out.candidates > 0) {
    auto by_order = [](const Candidate& a, const Candidate& b) { return OrderKey(a) < OrderKey(b); };
    std::sort(c.exact.begin(), c.exact.end(), by_order);
    std::sort(c.partial.begin(), c.partial.end(), by_order);
    // Step 2's order: exact candidates, then partial ones; asked wave by wave.
    std::vector<const Candidate*> order;
    for (const auto& x : c.exact) order.push_back(&x);
    for (const auto& x : c.partial) order.push_back(&x);
    std::vector<KubeletView> seen;  // In step 2's order.
    std::optional<size_t> admitting;
    for (size_t begin = 0; begin < order.size() && !admitting;) {
      const size_t end = std::min(order.size(), begin == 0 ? 1 : begin + kViewWave);
      std::vector<const Candidate*> wave(order.begin() + begin, order.begin() + end);
      begin = end;
      std::vector<KubeletView> got = views(wave);
      got.resize(wave.size(), KubeletView::kUnknown);
      out.asked += static_cast<int>(wave.size());
      for (KubeletView v : got) {
        if (!admitting && v == KubeletView::kAdmitting) admitting = seen.size();
        if (v == KubeletView::kUnknown) ++out.unknown;
        seen.push_back(v);
      }
    }
    if (admitting && *admitting < c.exact.size()) {
      c.exact = {c.exact[*admitting]};
      c.partial.clear();
    } else if (admitting) {
      c.partial = {c.partial[*admitting - c.exact.size()]};
      c.exact.clear();
    } else {
      std::vector<KubeletView> exact_views(seen.begin(), seen.begin() + c.exact.size());
      std::vector<KubeletView> partial_views(seen.begin() + c.exact.size(), seen.end());
      c.exact = Narrow(std::move(c.exact), exact_views);
      c.partial = Narrow(std::move(c.partial), partial_views);
    }
  }
  out.decision = Decide(request, c.exact, c.partial, pods, ledger, node);
  std::optional<DeviceList> answer;
  if (out.decision.kind != Decision::Kind::kPlanned && backend) answer = backend(out.decision.backend);
  out.reply = Complete(request, out.decision, answer);
  return out;
}

Holder IdentifyAllocation(const DeviceList& devices, std::string_view node, const std::vector<NodePod>& pods,
                          const Ledger& ledger, const std::optional<Decision>& pending,
                          const std::optional<Holder>& previous) {
  const DeviceList d = Sorted(devices);
  auto as_planned = [&](const std::string& uid, const std::string& container) {
    for (const auto& pod : pods) {
      if (pod.uid != uid) continue;
      const GpuAssignment* plan = UsablePlan(pod, node);
      return plan && HoldsAsPlanned(pod, *plan, container, d);
    }
    return false;
  };
  if (pending && pending->size == static_cast<int>(d.size())) {
    if (pending->pod_uid.empty() || ledger.Allocated(pending->pod_uid, pending->container)) return {};
    return {pending->pod_uid, pending->container, as_planned(pending->pod_uid, pending->container)};
  }
  if (previous) {
    // Kubelet skips GetPreferredAllocation only when a container takes all it needs from the
    // devices its pod's init container left: the pod of the Allocate just before.
    if (previous->pod_uid.empty()) return {};
    for (const auto& pod : pods) {
      if (pod.uid != previous->pod_uid) continue;
      const GpuContainer* next = NextContainer(pod, ledger);
      if (!next) return {};
      return {pod.uid, next->name, as_planned(pod.uid, next->name)};
    }
    return {};
  }
  for (const auto& pod : pods) {
    const GpuAssignment* plan = UsablePlan(pod, node);
    if (!plan || ledger.Ended(pod.uid)) continue;
    for (const auto& c : pod.containers) {
      if (ledger.Allocated(pod.uid, c.name)) continue;
      const DeviceList* s = plan->Find(c.name);
      if (s && Sorted(*s) == d) return {pod.uid, c.name, true};
    }
  }
  return {};
}

}  // namespace topofit::node
