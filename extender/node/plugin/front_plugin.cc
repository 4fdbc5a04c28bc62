#include "extender/node/plugin/front_plugin.h"

#include "base/log.h"
#include "extender/node/plugin/grpc_util.h"

namespace topofit::node {
namespace {

using Clock = std::chrono::system_clock;

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
                                          {"as_planned", h.planned ? "true" : "false"}, {"devices", JoinDevices(devices)}});
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

void FrontPlugin::MarkEnded(const std::string& pod_uid) {
  std::lock_guard lock(mu_);
  ledger_.MarkEnded(pod_uid);
}

Ledger FrontPlugin::LedgerCopy() const {
  std::lock_guard lock(mu_);
  return ledger_;
}

}  // namespace topofit::node
