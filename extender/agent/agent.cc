#include "extender/agent/agent.h"

#include <fmt/format.h>

#include "extender/agent/command_runner.h"
#include "extender/agent/topology_report.h"

namespace topofit::agent {

Agent::Agent(AgentOptions options, NodePublisher& publisher, LogFn log)
    : options_(std::move(options)), publisher_(publisher), log_(std::move(log)) {}

PassOutcome Agent::Fail(const std::string& reason, const std::string& message) {
  log_(fmt::format("{}: {}", reason, message));
  std::string key = reason + "\n" + message;
  if (key != last_event_) {
    Status sent = publisher_.CreateNodeEvent(options_.node_name, {"Warning", reason, message});
    if (sent.ok()) {
      last_event_ = key;
    } else {
      log_(fmt::format("cannot record event {} on node {}: {}", reason, options_.node_name, sent.error()));
    }
  }
  return PassOutcome::kFailed;
}

PassOutcome Agent::RunOnce() {
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

  auto current = publisher_.GetNodeAnnotations(options_.node_name);
  if (!current.ok()) return Fail(kReasonUnavailable, fmt::format("cannot read node: {}", current.error()));
  auto it = current->find(kHashAnnotation);
  bool same = it != current->end() && it->second == report->hash &&
              current->count(kTopologyAnnotation) && current->count(kUuidsAnnotation);
  last_event_.clear();  // The node is healthy again: a recurring failure deserves a new event.
  if (same) return PassOutcome::kUnchanged;

  Status patched = publisher_.PatchNodeAnnotations(options_.node_name, report->Annotations());
  if (!patched.ok()) return Fail(kReasonUnavailable, fmt::format("cannot annotate node: {}", patched.error()));
  std::string message = fmt::format("published the topology of {} GPUs (sha256 {})", report->gpu_count,
                                    report->hash.substr(0, 12));
  log_(message);
  Status sent = publisher_.CreateNodeEvent(options_.node_name, {"Normal", kReasonPublished, message});
  if (!sent.ok()) log_(fmt::format("cannot record event {}: {}", kReasonPublished, sent.error()));
  return PassOutcome::kPublished;
}

void Agent::Run() {
  for (;;) {
    RunOnce();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, options_.interval, [this] { return stop_; })) return;
  }
}

void Agent::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

}  // namespace topofit::agent
