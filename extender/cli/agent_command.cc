// `topofit agent`: publishes this GPU node's `nvidia-smi topo -m` to its Node annotations and keeps
// it current (extender/agent/agent.h). In a cluster it runs as the topofit-agent DaemonSet
// (manifests/base/agent-daemonset.yaml) with NODE_NAME from the downward API.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "extender/agent/agent.h"
#include "extender/agent/command_runner.h"
#include "extender/agent/topology_report.h"
#include "extender/cli/command.h"
#ifdef TOPOFIT_AGENT_HAS_KUBE
#include "extender/agent/kube_node_publisher.h"
#endif

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

// "90s", "5m", "1h", "250ms" or plain seconds.
bool ParseDuration(const std::string& text, std::chrono::milliseconds* out) {
  size_t pos = 0;
  long long n = 0;
  try { n = std::stoll(text, &pos); } catch (...) { return false; }
  std::string unit = text.substr(pos);
  long long ms = unit == "ms" ? n : unit == "" || unit == "s" ? n * 1000 : unit == "m" ? n * 60000
               : unit == "h" ? n * 3600000 : -1;
  if (n <= 0 || ms <= 0) return false;
  *out = std::chrono::milliseconds(ms);
  return true;
}

void Log(const std::string& line) {
  auto now = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  std::fprintf(stderr, "%s topofit-agent: %s\n", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now).c_str(), line.c_str());
  std::fflush(stderr);
}

// --dry-run: what would be published, as JSON on stdout; no cluster needed.
int DryRun(const agent::AgentOptions& options) {
  auto topo = agent::RunCommand({options.nvidia_smi, "topo", "-m"});
  if (!topo.ok()) { Log(topo.error()); return 1; }
  auto ids = agent::RunCommand({options.nvidia_smi, "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"});
  if (!ids.ok()) { Log(ids.error()); return 1; }
  auto report = agent::BuildTopologyReport(*topo, *ids);
  if (!report.ok()) { Log("output does not parse: " + report.error()); return 1; }
  nlohmann::json j = {{"node", options.node_name}, {"annotations", report->Annotations()}};
  std::puts(j.dump(2).c_str());
  return 0;
}

int RunAgent(const AgentFlags& flags) {
  agent::AgentOptions options;
  options.node_name = flags.node_name;
  if (options.node_name.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) options.node_name = env;
  }
  options.nvidia_smi = flags.nvidia_smi;
  if (!ParseDuration(flags.interval, &options.interval)) {
    std::fprintf(stderr, "topofit agent: --interval '%s' is not a duration like 30s, 5m or 1h\n", flags.interval.c_str());
    return 2;
  }
  if (flags.dry_run) return DryRun(options);
  if (options.node_name.empty()) {
    std::fputs("topofit agent: no node name: pass --node-name or set NODE_NAME\n", stderr);
    return 2;
  }
#ifdef TOPOFIT_AGENT_HAS_KUBE
  auto api = agent::ConnectToCluster(flags.kubeconfig, flags.context);
  if (!api.ok()) {
    Log("cannot connect to the API server: " + api.error());
    return 1;
  }
  agent::KubeNodePublisher publisher(**api);
  agent::Agent agent(options, publisher, Log);
  if (flags.once) return agent.RunOnce() == agent::PassOutcome::kFailed ? 1 : 0;

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    Log(fmt::format("signal {}: stopping", sig));
    agent.Stop();
  });
  watcher.detach();
  Log(fmt::format("publishing node {} every {}s with {}", options.node_name, options.interval.count() / 1000,
                  options.nvidia_smi));
  agent.Run();
  return 0;
#else
  std::fputs("topofit agent: this build has no Kubernetes client; only --dry-run works\n", stderr);
  return 1;
#endif
}

CommandRegistration registration{
    "agent", "Publish this GPU node's nvidia-smi topology to its Node annotations (DaemonSet)", 40,
    [](CLI::App& sub) -> CommandRun {
      auto flags = std::make_shared<AgentFlags>();
      sub.add_option("--node-name", flags->node_name, "Node to annotate (default: $NODE_NAME, from the downward API)");
      sub.add_option("--nvidia-smi", flags->nvidia_smi, "nvidia-smi binary to run")->capture_default_str();
      sub.add_option("--interval", flags->interval, "Re-check period: 30s, 5m, 1h")->capture_default_str();
      sub.add_option("--kubeconfig", flags->kubeconfig, "kubeconfig file (default: in-cluster service account)");
      sub.add_option("--context", flags->context, "kubeconfig context (default: current-context)");
      sub.add_flag("--once", flags->once, "One pass, then exit (status 1 when it failed)");
      sub.add_flag("--dry-run", flags->dry_run, "Print the annotations that would be published, as JSON; no cluster");
      return [flags] { return RunAgent(*flags); };
    }};

}  // namespace
}  // namespace topofit::cli
