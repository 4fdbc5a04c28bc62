// FrontPlugin::Preferred (front_plugin.h): the answer to one GetPreferredAllocation container
// request, in steps within preferred_timeout - match the request to a planned container over the pod
// cache and the ledger with kubelet's PodResources views; when no plan matched and no pod without a
// plan is the one kubelet admits, wait for the pod cache to change and match again; complete the reply
// from the backend's own answer; count and log the outcome.
#include <algorithm>
#include <thread>

#include "base/log.h"
#include "extender/node/plugin/front_plugin.h"
#include "extender/node/plugin/preferred_request_wire.h"

namespace topofit::node {
namespace {

using Clock = std::chrono::system_clock;

const char* KindName(Decision::Kind k) {
  switch (k) {
    case Decision::Kind::kPlanned: return "planned";
    case Decision::Kind::kPartial: return "partial";
    case Decision::Kind::kUnplanned: return "unplanned";
  }
  return "?";
}

ViewQuery QueryOf(const NodePod& pod, const std::string& container) {
  ViewQuery q{pod.namespace_, pod.name, container};
  for (const auto& c : pod.containers) {
    if (c.name == container) q.regular_init = c.init && !c.restartable;
  }
  return q;
}

// Whether a pod without a usable plan may be the one kubelet asks for: its next GPU container (one
// the ledger has not seen allocated) has the request's size and kubelet says it is admitting that
// container, or cannot say. The newest such pods are asked first, at most `max_asked` of them.
bool ForeignMayBeAdmitted(const PreferredRequest& r, const std::vector<NodePod>& pods, const Ledger& ledger,
                          std::string_view node, const ViewFn& view, int max_asked = 4) {
  if (!view) return true;  // No PodResources: nothing tells.
  std::vector<std::pair<const NodePod*, const GpuContainer*>> foreign;
  for (const auto& pod : pods) {
    if (pod.node_name != node || pod.terminal() || pod.deleting || ledger.Ended(pod.uid) || UsablePlan(pod, node)) {
      continue;
    }
    for (const auto& c : pod.containers) {
      if (ledger.Allocated(pod.uid, c.name)) continue;
      if (c.gpus == r.size) foreign.emplace_back(&pod, &c);
      break;
    }
  }
  std::sort(foreign.begin(), foreign.end(), [](const auto& a, const auto& b) {
    return a.first->creation_timestamp > b.first->creation_timestamp;
  });
  if (static_cast<int>(foreign.size()) > max_asked) foreign.resize(max_asked);
  for (const auto& [pod, c] : foreign) {
    KubeletView v = view(*pod, c->name);
    if (v == KubeletView::kAdmitting || v == KubeletView::kUnknown) return true;
  }
  return false;
}

}  // namespace

// One request's deadline and the steps that spend it: kubelet's views and the backend's answer, each
// given what is left; a step with nothing left is skipped (kUnknown views, no backend answer) and
// marks the request timed out.
class FrontPlugin::PreferredCall {
 public:
  explicit PreferredCall(FrontPlugin& front)
      : front_(front), deadline_(Clock::now() + front.options_.preferred_timeout) {}

  Clock::time_point deadline() const { return deadline_; }
  bool timed_out() const { return timed_out_ || Clock::now() > deadline_; }

  std::vector<KubeletView> Views(const std::vector<const Candidate*>& wave) {
    auto remaining = Left();
    if (remaining.count() <= 0) {
      timed_out_ = true;
      return std::vector<KubeletView>(wave.size(), KubeletView::kUnknown);
    }
    std::vector<ViewQuery> queries;
    queries.reserve(wave.size());
    for (const Candidate* c : wave) queries.push_back(QueryOf(*c->pod, c->container));
    auto out = front_.kubelet_.Views(queries, std::min(front_.options_.get_timeout, remaining));
    for (KubeletView v : out) {
      if (v == KubeletView::kUnknown && Left().count() <= 0) timed_out_ = true;
    }
    return out;
  }

  KubeletView View(const NodePod& pod, const std::string& container) {
    auto remaining = Left();
    if (remaining.count() <= 0) {
      timed_out_ = true;
      return KubeletView::kUnknown;
    }
    KubeletView v = front_.kubelet_.Views({QueryOf(pod, container)}, std::min(front_.options_.get_timeout, remaining))[0];
    if (v == KubeletView::kUnknown && Left().count() <= 0) timed_out_ = true;
    return v;
  }

  std::optional<DeviceList> AskBackend(const PreferredRequest& b) {
    if (!front_.backend_.options().get_preferred_allocation_available()) return std::nullopt;
    if (Left().count() <= 0) {
      timed_out_ = true;
      return std::nullopt;
    }
    v1beta1::PreferredAllocationRequest breq;
    AddContainerRequest(breq, b);
    v1beta1::PreferredAllocationResponse bresp;
    grpc::Status st = front_.backend_.GetPreferredAllocation(breq, &bresp, deadline_);
    if (!st.ok() || bresp.container_responses_size() == 0) {
      ++front_.counters_.backend_preferred_errors;
      if (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) timed_out_ = true;
      Log(LogLevel::kWarn, "backend GetPreferredAllocation failed; answering without it", {{"error", st.error_message()}});
      return std::nullopt;
    }
    const auto& ids = bresp.container_responses(0).deviceids();
    return DeviceList(ids.begin(), ids.end());
  }

 private:
  std::chrono::milliseconds Left() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
  }

  FrontPlugin& front_;
  const Clock::time_point deadline_;
  bool timed_out_ = false;
};

DeviceList FrontPlugin::Preferred(const v1beta1::ContainerPreferredAllocationRequest& req) {
  PreferredCall call(*this);
  PreferredRequest r = PreferredRequestOf(req);
  auto pods = pods_.Snapshot();
  Ledger ledger = LedgerCopy();
  ViewsFn views = [&call](const std::vector<const Candidate*>& wave) { return call.Views(wave); };
  // The backend is asked once the decision is final (below), not on each match.
  MatchResult m = Match(r, options_.node_name, *pods, ledger, views, BackendFn{});
  m = AwaitPodCache(r, call, views, pods, ledger, std::move(m));
  if (m.decision.kind != Decision::Kind::kPlanned) m.reply = Complete(r, m.decision, call.AskBackend(m.decision.backend));
  {
    std::lock_guard lock(mu_);
    pending_ = m.decision;
  }
  CountPreferred(r, m, call);
  return m.reply;
}

// Kubelet and topofit node watch the API server apart, and kubelet may ask within milliseconds of
// the bind: the pod it admits can be missing from the pod cache. When no planned container matched
// and no pod without a plan is the one kubelet admits, wait for the cache to change (up to
// pod_cache_wait) and match again.
MatchResult FrontPlugin::AwaitPodCache(const PreferredRequest& r, PreferredCall& call, const ViewsFn& views,
                                       std::shared_ptr<const std::vector<NodePod>>& pods, Ledger& ledger,
                                       MatchResult m) {
  ViewFn view = [&call](const NodePod& pod, const std::string& container) { return call.View(pod, container); };
  const Clock::time_point waited_from = Clock::now();
  const Clock::time_point wait_until = std::min(call.deadline(), waited_from + options_.pod_cache_wait);
  bool waited = false;
  while (m.decision.kind == Decision::Kind::kUnplanned && Clock::now() < wait_until &&
         !ForeignMayBeAdmitted(r, *pods, ledger, options_.node_name, view)) {
    auto next = pods_.Snapshot();
    while (next == pods && Clock::now() < wait_until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      next = pods_.Snapshot();
    }
    if (next == pods) break;
    pods = std::move(next);
    ledger = LedgerCopy();
    waited = true;
    m = Match(r, options_.node_name, *pods, ledger, views, BackendFn{});
  }
  if (waited && LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, "waited for the pod cache",
        {{"ms", std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - waited_from).count() / 1000.0)},
         {"decision", KindName(m.decision.kind)}, {"pod", m.decision.pod_key}});
  }
  return m;
}

void FrontPlugin::CountPreferred(const PreferredRequest& r, const MatchResult& m, const PreferredCall& call) {
  ++counters_.preferred;
  switch (m.decision.kind) {
    case Decision::Kind::kPlanned: ++counters_.planned; break;
    case Decision::Kind::kPartial: ++counters_.partial; break;
    case Decision::Kind::kUnplanned: ++counters_.unplanned; break;
  }
  if (m.decision.tentative) ++counters_.tentative;
  PreferredOutcome outcome = m.decision.kind == Decision::Kind::kPlanned   ? PreferredOutcome::kPlan
                             : m.decision.kind == Decision::Kind::kPartial ? PreferredOutcome::kPartialPlan
                             : m.candidates == 0                           ? PreferredOutcome::kForeign
                                                                           : PreferredOutcome::kBackendFallback;
  if (call.timed_out()) outcome = PreferredOutcome::kTimeout;
  ++counters_.by_outcome[static_cast<size_t>(outcome)];
  if (LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, "preferred allocation",
        {{"decision", KindName(m.decision.kind)}, {"pod", m.decision.pod_key}, {"container", m.decision.container},
         {"size", std::to_string(r.size)}, {"candidates", std::to_string(m.candidates)},
         {"asked", std::to_string(m.asked)}, {"unknown", std::to_string(m.unknown)}, {"reply", JoinDevices(m.reply)}});
  }
}

}  // namespace topofit::node
