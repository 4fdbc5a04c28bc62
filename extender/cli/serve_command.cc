// `topofit serve`: the kube-scheduler extender over HTTP. Cluster source: the API server (--kubeconfig,
// --in-cluster: list + watch of nodes, pods and both APIs' PodGroups), else --snapshot FILE (what
// `kubectl get nodes,pods,podgroups -A -o json|yaml` prints), else the embedded demo cluster.
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>

#include "base/log.h"
#include "extender/apiclient/model_sink.h"
#include "extender/apiclient/pod_group_watch.h"
#include "extender/cli/command.h"
#include "extender/cli/serve_flags.h"
#include "extender/k8s/demo_cluster.h"
#include "extender/k8s/snapshot.h"
#include "extender/server/serve_app.h"
#include "extender/server/serve_settings.h"

namespace topofit::cli {
namespace {

// SIGTERM/SIGINT only write a byte here (async-signal-safe); the main thread does the shutdown.
int g_signal_pipe[2] = {-1, -1};

void OnSignal(int) {
  char c = 1;
  ssize_t ignored = write(g_signal_pipe[1], &c, 1);
  (void)ignored;
}

// How long a SIGTERM waits for running calls (a bind's API writes) before exiting anyway; well
// inside Kubernetes' default 30 s termination grace period.
constexpr std::chrono::seconds kDrain{10};

void PrintTryIt(const server::ServeConfig& cfg, int port) {
  std::string host = cfg.server.host == "0.0.0.0" || cfg.server.host.empty() ? "127.0.0.1" : cfg.server.host;
  std::string base = fmt::format("http://{}:{}", host, port);
  std::printf(
      "topofit serve: extender at %s%s/{filter,prioritize,bind,preempt}, running on the embedded demo cluster\n"
      "(5 nodes: dgx-v100-1, dgx-v100-2, a100-1, pcie-1, pcie-4x-1; 36 GPUs). Try it:\n\n"
      "  curl -s %s%s/filter -d '{\"Pod\":{\"metadata\":{\"name\":\"train\",\"namespace\":\"ml\",\"uid\":\"u-1\"},"
      "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]}},"
      "\"Nodes\":null,\"NodeNames\":[\"dgx-v100-1\",\"dgx-v100-2\",\"a100-1\",\"pcie-1\",\"pcie-4x-1\"]}'\n\n"
      "  curl -s %s/api/v1/explain -H 'Content-Type: application/yaml' --data-binary $'metadata: {name: train, "
      "namespace: ml}\\nspec:\\n  containers:\\n  - resources: {limits: {nvidia.com/gpu: 4}}\\n'\n\n"
      "  curl -s %s/api/v1/nodes     curl -s %s/metrics\n\n",
      base.c_str(), cfg.server.url_prefix.c_str(), base.c_str(), cfg.server.url_prefix.c_str(), base.c_str(),
      base.c_str(), base.c_str());
  std::fflush(stdout);
}

int Fail(int code, const std::string& error) {
  Log(LogLevel::kError, "cannot serve", {{"error", error}});
  return code;
}

// Live mode: --kubeconfig, --in-cluster, or in a pod (KUBERNETES_SERVICE_HOST) without --snapshot.
apiclient::LiveOptions LiveOptionsOf(const server::ServeSource& src) {
  apiclient::LiveOptions live;
  live.kubeconfig = src.kubeconfig;
  live.context = src.context;
  live.api.qps = src.kube_api_qps;
  live.api.burst = src.kube_api_burst;
  live.watch.page_size = src.kube_api_list_limit;
  live.in_cluster =
      src.in_cluster || (src.kubeconfig.empty() && src.snapshot.empty() && std::getenv("KUBERNETES_SERVICE_HOST"));
  return live;
}

// The API server's client in live mode; null otherwise.
Result<std::shared_ptr<apiclient::ApiClient>> ConnectIfLive(const apiclient::LiveOptions& live) {
  if (live.kubeconfig.empty() && !live.in_cluster) return std::shared_ptr<apiclient::ApiClient>();
  auto connected = apiclient::ConnectApi(live);
  if (!connected) return Error{connected.error()};
  return *connected;
}

// Snapshot mode: the file streams into the model; without one, the embedded demo cluster (small and
// compiled in).
Result<server::ServeApp::Loaded> LoadCluster(server::ServeApp& a, const std::string& snapshot) {
  if (!snapshot.empty()) return a.LoadFile(snapshot);
  auto demo = k8s::LoadDemoCluster();
  if (!demo) return Error{demo.error()};
  a.Load(*demo);
  return server::ServeApp::Loaded{demo->nodes.size(), demo->pods.size()};
}

// Live mode: list and watch the API server into the model; ready once both first lists are applied.
std::unique_ptr<apiclient::LiveCluster> StartWatch(apiclient::LiveOptions live,
                                                   const std::shared_ptr<apiclient::ApiClient>& api,
                                                   server::ServeApp& a) {
  live.on_ready = [&a] { a.server().SetReady(true); };
  live.on_watch_state = [&a](const std::string& kind, bool connected) { a.metrics().SetWatchConnected(kind, connected); };
  auto requeue = [&a](const cluster::WaitingPod& pod, const std::string& node) {
    a.writer().RequeuePod(pod.namespace_, pod.name, pod.uid);
    a.metrics().CountRequeue();
    Log(LogLevel::kInfo, "requeue pod", {{"pod", pod.namespace_ + "/" + pod.name}, {"gpus", std::to_string(pod.gpus)},
                                        {"node", node}, {"why", "GPUs freed on a node that turned it away"}});
  };
  return apiclient::StartLiveCluster(live, api, a.model(), requeue, &a.dra());
}

void LogServing(const server::ServeConfig& cfg, server::ServeApp& a, server::ServeApp::Loaded loaded,
                const std::string& source) {
  Log(LogLevel::kInfo, "serving",
      {{"listen", fmt::format("{}:{}", cfg.server.host, a.server().port())},
       {"tls", !cfg.server.tls.enabled() ? "off" : cfg.server.tls.client_ca_file.empty() ? "on" : "on, client certificates required"},
       {"ops", fmt::format("{}:{}", cfg.server.ops_port >= 0 ? cfg.server.ops_host : cfg.server.host, a.server().ops_port())},
       {"prefix", cfg.server.url_prefix},
       {"nodes", std::to_string(loaded.nodes)},
       {"pods", std::to_string(loaded.pods)},
       {"podgroups", std::to_string(loaded.pod_groups)},
       {"source", source}});
}

// Serves until SIGTERM or SIGINT, then drains and exits the process; returns only when serving
// cannot start.
int ServeUntilSignal(server::ServeApp& a) {
  if (pipe(g_signal_pipe) != 0) return Fail(1, "cannot create the signal pipe");
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  if (Status started = a.server().Start(); !started.ok()) return Fail(1, started.error());
  char c;
  while (read(g_signal_pipe[0], &c, 1) < 0 && errno == EINTR) {
  }
  Log(LogLevel::kInfo, "shutting down", {{"in_flight", std::to_string(a.server().in_flight())}});
  bool drained = a.server().Shutdown(kDrain);
  if (drained) Log(LogLevel::kInfo, "stopped");
  else Log(LogLevel::kWarn, "stopped with calls still running after the drain period");
  // Exit without destroying anything: a handler past the drain period may still be running, and the
  // watch's threads need no orderly goodbye. Stdio (the --record file, logs) is flushed first.
  std::fflush(nullptr);
  std::_Exit(drained ? 0 : 1);
}

int RunServe(const ServeFlags& flags) {
  auto settings = server::ResolveServeSettings(flags.Given());
  if (!settings) return Fail(2, settings.error());
  const server::ServeConfig& cfg = settings->config;
  const server::ServeSource& src = settings->source;
  const apiclient::LiveOptions live = LiveOptionsOf(src);
  auto api = ConnectIfLive(live);
  if (!api) return Fail(2, api.error());
  auto app = server::ServeApp::Create(cfg, src.record, *api ? std::make_unique<apiclient::ApiWriter>(*api) : nullptr);
  if (!app) return Fail(2, app.error());
  server::ServeApp& a = **app;
  server::ServeApp::Loaded loaded;
  if (!*api) {
    auto from = LoadCluster(a, src.snapshot);
    if (!from) return Fail(2, from.error());
    loaded = *from;
  }
  if (Status bound = a.server().Bind(); !bound.ok()) return Fail(1, bound.error());
  std::unique_ptr<apiclient::LiveCluster> watch;  // Declared after the app: stops before the model goes.
  std::unique_ptr<apiclient::PodGroupWatch> pod_groups;  // Either API may be absent: never fails here.
  if (*api) {
    watch = StartWatch(live, *api, a);
    pod_groups = std::make_unique<apiclient::PodGroupWatch>(**api, a.pod_groups(), live);
  }
  LogServing(cfg, a, loaded, *api ? (*api)->config().server : src.snapshot.empty() ? "demo" : src.snapshot);
  if (!*api && src.snapshot.empty() && !cfg.server.tls.enabled()) PrintTryIt(cfg, a.server().port());
  return ServeUntilSignal(a);
}

}  // namespace

CommandRun SetupServe(CLI::App& sub) {
  // Every flag, its help and its default come from the settings table (serve_settings.h).
  auto flags = std::make_shared<ServeFlags>(sub);
  return [flags] { return RunServe(*flags); };
}

}  // namespace topofit::cli
