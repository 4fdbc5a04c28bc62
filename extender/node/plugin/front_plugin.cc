#include "extender/node/plugin/front_plugin.h"

#include <algorithm>
#include <thread>

#include "base/log.h"
#include "extender/node/plugin/grpc_util.h"

namespace topofit::node {
namespace {

using Clock = std::chrono::system_clock;

std::string Join(const DeviceList& d) {
  std::string out;
  for (const auto& x : d) out += (out.empty() ? "" : ",") + x;
  return out;
}

const char* KindName(Decision::Kind k) {
  switch (k) {
    case Decision::Kind::kPlanned: return "planned";
    case Decision::Kind::kPartial: return "partial";
    case Decision::Kind::kUnplanned: return "unplanned";
  }
  return "?";
}

// Whether a pod without a usable plan may be the one kubelet asks for: its next GPU container (one
// the ledger has not seen allocated) has the request's size and kubelet says it is admitting that
// container, or cannot say. The newest such pods are asked first, at most `max_asked` of them.
bool ForeignMayBeAdmitted(const PreferredRequest& r, const std::vector<NodePod>& pods, const Ledger& ledger,
                          std::string_view node, const ViewFn& view, int max_asked = 4) {
  if (!view) return true;  // No PodResources: nothing tells.
  std::vector<std::pair<const NodePod*, const GpuContainer*>> foreign;
  for (const auto& pod : pods) {
    if (pod.node_name != node || pod.terminal() || pod.deleting || UsablePlan(pod, node)) continue;
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

FrontPlugin::FrontPlugin(FrontOptions options, BackendClient& backend, PodCache& pods,
                         const PodResourcesClient& kubelet)
    : options_(std::move(options)), backend_(backend), pods_(pods), kubelet_(kubelet) {}

grpc::Status FrontPlugin::GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                                 v1beta1::DevicePluginOptions* out) {
  out->set_pre_start_required(backend_.options().pre_start_required());
  out->set_get_preferred_allocation_available(true);
  return grpc::Status::OK;
}

grpc::Status FrontPlugin::ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty*,
                                       grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  uint64_t seen = ~uint64_t{0};
  bool sent_unhealthy = false;
  std::optional<Clock::time_point> away_since;
  while (!ctx->IsCancelled() && !shutdown_) {
    uint64_t version = backend_.WaitForChange(seen, std::chrono::milliseconds(200));
    if (!backend_.ever_listed()) continue;
    bool connected = backend_.connected();
    if (connected) {
      away_since.reset();
    } else if (!away_since) {
      away_since = Clock::now();
    }
    bool force_unhealthy = !connected && Clock::now() - *away_since >= options_.backend_grace;
    if (version == seen && force_unhealthy == sent_unhealthy) continue;
    v1beta1::ListAndWatchResponse resp;
    for (const auto& d : backend_.devices()) {
      auto* dev = resp.add_devices();
      *dev = d;
      if (force_unhealthy) dev->set_health("Unhealthy");
    }
    if (!writer->Write(resp)) break;
    seen = version;
    sent_unhealthy = force_unhealthy;
  }
  return grpc::Status::OK;
}

DeviceList FrontPlugin::Preferred(const v1beta1::ContainerPreferredAllocationRequest& req) {
  const Clock::time_point deadline = Clock::now() + options_.preferred_timeout;
  PreferredRequest r{{req.available_deviceids().begin(), req.available_deviceids().end()},
                     {req.must_include_deviceids().begin(), req.must_include_deviceids().end()},
                     req.allocation_size()};
  auto pods = pods_.Snapshot();
  Ledger ledger = LedgerCopy();
  auto left = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()); };
  bool timed_out = false;
  auto query_of = [](const NodePod& pod, const std::string& container) {
    ViewQuery q{pod.namespace_, pod.name, container};
    for (const auto& c : pod.containers) {
      if (c.name == container) q.regular_init = c.init && !c.restartable;
    }
    return q;
  };
  ViewsFn views = [&](const std::vector<const Candidate*>& wave) {
    auto remaining = left();
    if (remaining.count() <= 0) {
      timed_out = true;
      return std::vector<KubeletView>(wave.size(), KubeletView::kUnknown);
    }
    std::vector<ViewQuery> queries;
    queries.reserve(wave.size());
    for (const Candidate* c : wave) queries.push_back(query_of(*c->pod, c->container));
    auto out = kubelet_.Views(queries, std::min(options_.get_timeout, remaining));
    for (KubeletView v : out) {
      if (v == KubeletView::kUnknown && left().count() <= 0) timed_out = true;
    }
    return out;
  };
  ViewFn view = [&](const NodePod& pod, const std::string& container) {
    auto remaining = left();
    if (remaining.count() <= 0) {
      timed_out = true;
      return KubeletView::kUnknown;
    }
    KubeletView v = kubelet_.Views({query_of(pod, container)}, std::min(options_.get_timeout, remaining))[0];
    if (v == KubeletView::kUnknown && left().count() <= 0) timed_out = true;
    return v;
  };
  BackendFn ask_backend = [&](const PreferredRequest& b) -> std::optional<DeviceList> {
    if (!backend_.options().get_preferred_allocation_available()) return std::nullopt;
    if (left().count() <= 0) {
      timed_out = true;
      return std::nullopt;
    }
    v1beta1::PreferredAllocationRequest breq;
    auto* c = breq.add_container_requests();
    for (const auto& id : b.available) c->add_available_deviceids(id);
    for (const auto& id : b.must_include) c->add_must_include_deviceids(id);
    c->set_allocation_size(b.size);
    v1beta1::PreferredAllocationResponse bresp;
    grpc::Status st = backend_.GetPreferredAllocation(breq, &bresp, deadline);
    if (!st.ok() || bresp.container_responses_size() == 0) {
      ++counters_.backend_preferred_errors;
      if (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) timed_out = true;
      Log(LogLevel::kWarn, "backend GetPreferredAllocation failed; answering without it", {{"error", st.error_message()}});
      return std::nullopt;
    }
    const auto& ids = bresp.container_responses(0).deviceids();
    return DeviceList(ids.begin(), ids.end());
  };
  // The backend is asked once the decision is final (below), not on each match.
  MatchResult m = Match(r, options_.node_name, *pods, ledger, views, BackendFn{});
  // Kubelet and topofit node watch the API server apart, and kubelet may ask within milliseconds of
  // the bind: the pod it admits can be missing from the pod cache. When no planned container
  // matched and no pod without a plan is the one kubelet admits, wait for the cache to change (up
  // to pod_cache_wait) and match again.
  const Clock::time_point waited_from = Clock::now();
  const Clock::time_point wait_until = std::min(deadline, waited_from + options_.pod_cache_wait);
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
  if (m.decision.kind != Decision::Kind::kPlanned) m.reply = Complete(r, m.decision, ask_backend(m.decision.backend));
  {
    std::lock_guard lock(mu_);
    pending_ = m.decision;
  }
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
  if (timed_out || Clock::now() > deadline) outcome = PreferredOutcome::kTimeout;
  ++counters_.by_outcome[static_cast<size_t>(outcome)];
  if (LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, "preferred allocation",
        {{"decision", KindName(m.decision.kind)}, {"pod", m.decision.pod_key}, {"container", m.decision.container},
         {"size", std::to_string(r.size)}, {"candidates", std::to_string(m.candidates)},
         {"asked", std::to_string(m.asked)}, {"unknown", std::to_string(m.unknown)}, {"reply", Join(m.reply)}});
  }
  return m.reply;
}

grpc::Status FrontPlugin::GetPreferredAllocation(grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* req,
                                                 v1beta1::PreferredAllocationResponse* out) {
  for (const auto& c : req->container_requests()) {
    const auto start = std::chrono::steady_clock::now();
    auto* resp = out->add_container_responses();
    try {
      for (const auto& id : Preferred(c)) resp->add_deviceids(id);
    } catch (const std::exception& e) {
      // Never an error to kubelet: an empty preference lets it choose alone.
      Log(LogLevel::kError, "GetPreferredAllocation failed inside; answering nothing", {{"error", e.what()}});
      resp->clear_deviceids();
    }
    counters_.preferred_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return grpc::Status::OK;
}

grpc::Status FrontPlugin::Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* req,
                                   v1beta1::AllocateResponse* out) {
  ++counters_.allocate_calls;
  grpc::Status st = backend_.Allocate(*req, out, After(options_.allocate_timeout));
  if (!st.ok()) {
    ++counters_.allocate_errors;
    Log(LogLevel::kWarn, "backend Allocate failed", {{"error", st.error_message()}});
    return st;
  }
  auto pods = pods_.Snapshot();
  std::lock_guard lock(mu_);
  for (const auto& c : req->container_requests()) {
    DeviceList devices(c.devices_ids().begin(), c.devices_ids().end());
    Holder h = IdentifyAllocation(devices, options_.node_name, *pods, ledger_, pending_, previous_);
    pending_.reset();
    previous_ = h;
    ledger_.Record(h.pod_uid, h.container, devices);
    ++counters_.allocations;
    if (h.planned) ++counters_.allocations_as_planned;
    if (LogEnabled(LogLevel::kDebug)) {
      Log(LogLevel::kDebug, "allocated", {{"pod_uid", h.pod_uid}, {"container", h.container},
                                          {"as_planned", h.planned ? "true" : "false"}, {"devices", Join(devices)}});
    }
  }
  return grpc::Status::OK;
}

grpc::Status FrontPlugin::PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest* req,
                                            v1beta1::PreStartContainerResponse* out) {
  return backend_.PreStartContainer(*req, out, After(std::chrono::seconds(30)));
}

void FrontPlugin::Shutdown() { shutdown_ = true; }
void FrontPlugin::Resume() { shutdown_ = false; }

uint64_t FrontPlugin::LedgerSeq() const {
  std::lock_guard lock(mu_);
  return ledger_.seq();
}

void FrontPlugin::ApplyTruth(std::vector<LedgerEntry> truth, uint64_t sent_at) {
  std::lock_guard lock(mu_);
  ledger_.ReplaceWithTruth(std::move(truth), sent_at);
}

void FrontPlugin::RetainPods(const std::set<std::string>& live) {
  std::lock_guard lock(mu_);
  ledger_.Retain(live);
}

Ledger FrontPlugin::LedgerCopy() const {
  std::lock_guard lock(mu_);
  return ledger_;
}

}  // namespace topofit::node
