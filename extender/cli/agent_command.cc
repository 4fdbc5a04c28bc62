// `topofit agent`: publishes this GPU node's `nvidia-smi topo -m` to its Node annotations and keeps
// it current (extender/node/agent.h). In a cluster it runs as the topofit-agent DaemonSet
// (manifests/base/agent-daemonset.yaml) with NODE_NAME from the downward API.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/log.h"
#include "extender/cli/command.h"
#include "extender/node/agent.h"
#include "extender/node/command_runner.h"
#include "extender/node/kube_node_publisher.h"
#include "extender/node/topology_report.h"

namespace topofit::cli {
namespace {

struct AgentFlags {
  std::string node_name;
  std::string nvidia_smi = "nvidia-smi";
  std::string interval = "5m";
  std::string kubeconfig;
  std::string context;
  bool once = false;
  bool dry_run = false;
};

// --dry-run: what would be published, as JSON on stdout; no cluster needed.
int DryRun(const node::AgentOptions& options) {
  auto topo = node::RunCommand({options.nvidia_smi, "topo", "-m"});
  if (!topo.ok()) return Log(LogLevel::kError, "cannot run nvidia-smi", {{"error", topo.error()}}), 1;
  auto ids = node::RunCommand({options.nvidia_smi, "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"});
  if (!ids.ok()) return Log(LogLevel::kError, "cannot run nvidia-smi", {{"error", ids.error()}}), 1;
  auto report = node::BuildTopologyReport(*topo, *ids);
  if (!report.ok()) return Log(LogLevel::kError, "nvidia-smi output does not parse", {{"error", report.error()}}), 1;
  nlohmann::json j = {{"node", options.node_name}, {"annotations", report->Annotations()}};
  std::puts(j.dump(2).c_str());
  return 0;
}

int RunAgent(const AgentFlags& flags) {
  node::AgentOptions options;
  options.node_name = flags.node_name;
  if (options.node_name.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) options.node_name = env;
  }
  options.nvidia_smi = flags.nvidia_smi;
  auto interval = ParseDuration(flags.interval);
  if (!interval) return Log(LogLevel::kError, "bad flag", {{"flag", "--interval"}, {"error", interval.error()}}), 2;
  options.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*interval);
  if (options.interval.count() == 0) {
    return Log(LogLevel::kError, "bad flag", {{"flag", "--interval"}, {"error", "shorter than 1ms"}}), 2;
  }
  if (flags.dry_run) return DryRun(options);
  if (options.node_name.empty()) {
    return Log(LogLevel::kError, "no node name: pass --node-name or set NODE_NAME"), 2;
  }
  auto api = node::ConnectToCluster(flags.kubeconfig, flags.context);
  if (!api.ok()) {
    Log(LogLevel::kError, "cannot connect to the API server", {{"error", api.error()}});
    return 1;
  }
  node::KubeNodePublisher publisher(**api);
  node::Agent agent(options, publisher);
  if (flags.once) return agent.RunOnce() == node::PassOutcome::kFailed ? 1 : 0;

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    Log(LogLevel::kInfo, "stopping", {{"signal", std::to_string(sig)}});
    agent.Stop();
  });
  watcher.detach();
  Log(LogLevel::kInfo, "publishing",
      {{"node", options.node_name}, {"interval", FormatDuration(options.interval)}, {"nvidia_smi", options.nvidia_smi}});
  agent.Run();
  return 0;
}

}  // namespace

CommandRun SetupAgent(CLI::App& sub) {
  auto flags = std::make_shared<AgentFlags>();
  sub.add_option("--node-name", flags->node_name, "Node to annotate (default: $NODE_NAME, from the downward API)");
  sub.add_option("--nvidia-smi", flags->nvidia_smi, "nvidia-smi binary to run")->capture_default_str();
  sub.add_option("--interval", flags->interval, "Re-check period: 30s, 5m, 1h")->capture_default_str();
  sub.add_option("--kubeconfig", flags->kubeconfig, "kubeconfig file (default: in-cluster service account)");
  sub.add_option("--context", flags->context, "kubeconfig context (default: current-context)");
  sub.add_flag("--once", flags->once, "One pass, then exit (status 1 when it failed)");
  sub.add_flag("--dry-run", flags->dry_run, "Print the annotations that would be published, as JSON; no cluster");
  return [flags] { return RunAgent(*flags); };
}

}  // namespace topofit::cli
