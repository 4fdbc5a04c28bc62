#include "extender/node/topology_publisher.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "extender/node/command_runner.h"
#include "extender/node/mig_listing.h"
#include "extender/node/topology_report.h"

namespace topofit::node {

TopologyPublisher::TopologyPublisher(TopologyPublisherOptions options, NodePublisher& publisher, LogFn log)
    : options_(std::move(options)), publisher_(publisher), log_(std::move(log)) {}

PassOutcome TopologyPublisher::Fail(const std::string& reason, const std::string& message) {
  log_(LogLevel::kWarn, "cannot publish the topology", {{"node", options_.node_name}, {"reason", reason}, {"error", message}});
  std::string key = reason + "\n" + message;
  if (key != last_event_) {
    Status sent = publisher_.CreateNodeEvent(options_.node_name, {"Warning", reason, message});
    if (sent.ok()) {
      last_event_ = key;
    } else {
      log_(LogLevel::kWarn, "cannot record an event", {{"node", options_.node_name}, {"reason", reason}, {"error", sent.error()}});
    }
  }
  return PassOutcome::kFailed;
}

void TopologyPublisher::AddMigDevices(TopologyReport& report) {
  auto listing = RunCommand({options_.nvidia_smi, "-L"}, options_.command_timeout);
  std::string error = listing.ok() ? "" : listing.error();
  if (listing.ok()) {
    std::vector<std::string> uuids;
    for (std::string_view u : Split(report.uuids, ',')) uuids.emplace_back(u);
    auto mig = ParseMigListing(*listing, uuids);
    if (mig.ok()) return report.SetMigUuids(EncodeMigUuids(*mig));
    error = mig.error();
  }
  // Not a failure of the pass: the topology and UUIDs stand; MIG devices stay unnamed in plans.
  log_(LogLevel::kWarn, "no MIG device map: `nvidia-smi -L` failed or does not parse",
       {{"node", options_.node_name}, {"error", error}});
}

PassOutcome TopologyPublisher::RunOnce() {
  const std::string& smi = options_.nvidia_smi;
  auto topo = RunCommand({smi, "topo", "-m"}, options_.command_timeout);
  if (!topo.ok()) return Fail(kReasonUnavailable, topo.error());
  auto ids = RunCommand({smi, "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"},
                        options_.command_timeout);
  if (!ids.ok()) return Fail(kReasonUnavailable, ids.error());

  ReportFailure failure;
  auto report = BuildTopologyReport(*topo, *ids, &failure);
  if (!report.ok()) {
    const char* what = failure == ReportFailure::kTopology ? "`nvidia-smi topo -m`" : "`nvidia-smi --query-gpu`";
    return Fail(kReasonParseError, fmt::format("{} output does not parse: {}", what, report.error()));
  }

  AddMigDevices(*report);

  auto current = publisher_.GetNodeAnnotations(options_.node_name);
  if (!current.ok()) return Fail(kReasonUnavailable, fmt::format("cannot read node: {}", current.error()));
  auto it = current->find(kHashAnnotation);
  bool same = it != current->end() && it->second == report->hash &&
              current->count(kTopologyAnnotation) && current->count(kUuidsAnnotation) &&
              current->count(kPciBusIdsAnnotation);
  last_event_.clear();  // The node is healthy again: a recurring failure deserves a new event.
  if (same) return PassOutcome::kUnchanged;

  Status patched = publisher_.PatchNodeAnnotations(options_.node_name, report->Annotations());
  if (!patched.ok()) return Fail(kReasonUnavailable, fmt::format("cannot annotate node: {}", patched.error()));
  std::string message = fmt::format("published the topology of {} GPUs (sha256 {})", report->gpu_count,
                                    report->hash.substr(0, 12));
  log_(LogLevel::kInfo, "published the topology",
       {{"node", options_.node_name}, {"gpus", std::to_string(report->gpu_count)}, {"sha256", report->hash.substr(0, 12)}});
  Status sent = publisher_.CreateNodeEvent(options_.node_name, {"Normal", kReasonPublished, message});
  if (!sent.ok()) {
    log_(LogLevel::kWarn, "cannot record an event",
         {{"node", options_.node_name}, {"reason", kReasonPublished}, {"error", sent.error()}});
  }
  return PassOutcome::kPublished;
}

void TopologyPublisher::Run() {
  for (;;) {
    RunOnce();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, options_.interval, [this] { return stop_; })) return;
  }
}

void TopologyPublisher::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

}  // namespace topofit::node
